package gateway

import (
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/wire"
)

// providerIDAt is the JSON string at path (object member names, outermost
// first) in data: where a protocol's answer names the provider's id of
// the call (Run.ProviderID). "" when data has no string there.
func providerIDAt(data []byte, path ...string) string {
	val := data
	for _, name := range path {
		var found []byte
		ok := wire.EachMember(val, func(key, v []byte) bool {
			if string(key) == name {
				found = v
			}
			return true
		})
		if !ok || found == nil {
			return ""
		}
		val = found
	}
	return openai.StringValue(val)
}

// idSeeker reads the provider's id from a native stream's events until it
// has it: once per call, not per event.
type idSeeker struct{ seen bool }

// from is the id at path in data while none was found yet, else "".
func (s *idSeeker) from(data []byte, path ...string) string {
	if s.seen {
		return ""
	}
	id := providerIDAt(data, path...)
	s.seen = id != ""
	return id
}
