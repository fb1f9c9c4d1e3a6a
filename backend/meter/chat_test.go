package meter

import "github.com/quotagate/quotagate/backend/openai"

// chatRequest is what the gateway's chat door makes of a parsed
// chat-completions body, for the tests here that start from JSON.
func chatRequest(r *openai.ChatRequest) Request {
	msgs := make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = Message{Role: m.Role, Name: m.Name, Text: m.Text, ToolCalls: m.Calls, Images: m.Images, OtherParts: m.OtherParts}
	}
	c, ok := r.OutputCap()
	return Request{Model: r.Model, Stream: r.Stream, Messages: msgs, ToolsJSON: r.ToolsJSON,
		OutputCap: c, HasOutputCap: ok, N: r.N}
}
