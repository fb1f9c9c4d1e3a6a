package openai

import "github.com/quotagate/quotagate/backend/wire"

// forwarded is what the chat and completions doors keep of a body they
// forward as the client wrote it: whether it streams, whether the client
// asked for the usage chunk, and the body with its top-level members, from
// which UpstreamBody asks for that chunk whatever the client asked.
type forwarded struct {
	Stream bool
	// IncludeUsage is true when the CLIENT asked for the usage chunk
	// (stream_options.include_usage). The gateway always asks the upstream
	// for it, and relays the usage chunk only when the client asked.
	IncludeUsage bool

	raw    []byte
	fields []wire.Field // top-level members in body order, for UpstreamBody
}

// read reads body with b, refusing a body without one of b.Required; it
// keeps the body and its members. The members both forwarded bodies carry
// are read here (the model into model, stream and stream_options into f),
// every other one through member.
func (f *forwarded) read(b wire.Body, body []byte, model *string, member func(wire.Field) error) error {
	fields, err := b.Read(body, func(m wire.Field) (err error) {
		switch m.Key {
		case "model":
			*model, err = wire.Model(m)
		case "stream":
			f.Stream, err = wire.Flag(m)
		case "stream_options":
			f.IncludeUsage, err = parseIncludeUsage(m.Val)
		default:
			err = member(m)
		}
		return err
	})
	if err == nil {
		err = wire.Require(fields, b.Required...)
	}
	if err != nil {
		return err
	}
	f.raw, f.fields = body, fields
	if !f.Stream {
		f.IncludeUsage = false // usage is always in a non-streaming body
	}
	return nil
}

// Raw returns the request body exactly as the client sent it.
func (f *forwarded) Raw() []byte { return f.raw }

// UpstreamBody returns the body to send upstream: the client's body
// unchanged, except that a streaming request always asks for the usage chunk
// (stream_options.include_usage = true) — the usage is the settlement
// evidence. Every other member, and every other stream_options member, is
// kept as the client wrote it.
func (f *forwarded) UpstreamBody() ([]byte, error) {
	if !f.Stream || f.IncludeUsage {
		return f.raw, nil
	}
	return withStreamUsage(f.fields, len(f.raw))
}
