package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// GetJSON GETs target asking for JSON, with the token as a Bearer
// credential unless it is "", and returns the answer's status and at most
// limit bytes of its body: how the balance sources and the usage lookups
// read a provider's JSON endpoints.
func GetJSON(ctx context.Context, client *http.Client, target, token string, limit int64) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, fmt.Errorf("read: %w", err)
	}
	return resp.StatusCode, body, nil
}

// DecodeJSON reads the first JSON value of doc with its numbers as
// json.Number, so that a figure keeps every digit.
func DecodeJSON(doc []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
