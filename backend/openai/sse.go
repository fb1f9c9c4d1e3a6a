package openai

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Event is one server-sent event as it came off the wire.
type Event struct {
	// Raw is the exact bytes of the event, including its terminating blank
	// line (and any blank lines before it), so the gateway can relay it
	// unchanged. Concatenating the Raw of every event gives back the stream.
	// (An event that ends in CR at the end of what has been read so far is
	// returned at once; if a LF follows — a CRLF split across reads — that
	// LF begins the next event's Raw, and a lone trailing one comes back as
	// an event without data.)
	Raw []byte
	// Data is the event's data lines joined with "\n" (nil when the event
	// has no data field).
	Data []byte
	// Name is the event's "event:" field, if any.
	Name string
	// Comment is true when the event consists only of comment lines
	// (keep-alives such as ": ping").
	Comment bool
	// Incomplete is true for the last event of a stream that ended before
	// its blank line. A spec-following client drops such an event; the
	// gateway must not take an end marker or usage from it.
	Incomplete bool
}

// HasData reports whether the event has at least one data field.
func (e Event) HasData() bool { return e.Data != nil }

// ErrEventTooLarge is returned when one event exceeds the reader's limit.
var ErrEventTooLarge = errors.New("openai: SSE event too large")

// SSEReader splits a text/event-stream into events. Lines may end in CRLF,
// LF or CR. It is not safe for concurrent use.
type SSEReader struct {
	r   io.Reader
	max int
	buf []byte // unconsumed input is buf[pos:]
	pos int
	err error // sticky read error
	// skipLF: the previous line ended in CR at the end of the buffered
	// input; a LF arriving next completes that CRLF and is no line break.
	skipLF  bool
	scratch []byte // joined data of multi-line events
	// bomDone: the stream's first bytes were checked for a UTF-8 BOM, which
	// the SSE format says to ignore (it stays in the first event's Raw).
	bomDone bool
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// DefaultMaxEventBytes bounds one event when the caller passes 0.
const DefaultMaxEventBytes = 1 << 20

// NewSSEReader reads events from r; an event longer than maxEventBytes
// (DefaultMaxEventBytes when ≤ 0) is an ErrEventTooLarge error.
func NewSSEReader(r io.Reader, maxEventBytes int) *SSEReader {
	if maxEventBytes <= 0 {
		maxEventBytes = DefaultMaxEventBytes
	}
	b := sseBuffers.Get().(*[]byte)
	return &SSEReader{r: r, max: maxEventBytes, buf: (*b)[:0]}
}

// sseBufferBytes is a reader's first buffer, taken from a pool (one
// buffer per stream, reused by the next: a buffer per event was a visible
// share of the gateway's allocations): most events are a few
// hundred bytes, and the buffer doubles for a longer one. Buffers up to
// ssePooledBytes go back to the pool.
const (
	sseBufferBytes = 1024
	ssePooledBytes = 4096
)

var sseBuffers = sync.Pool{New: func() any { b := make([]byte, 0, sseBufferBytes); return &b }}

// Release gives the reader's buffer back for another stream. The reader,
// and every Raw and Data it returned, must not be used after.
func (s *SSEReader) Release() {
	b := s.buf[:0]
	s.buf, s.pos, s.scratch, s.err = nil, 0, nil, errReleased
	if cap(b) <= ssePooledBytes { // a larger one goes to the collector
		sseBuffers.Put(&b)
	}
}

var errReleased = errors.New("openai: SSE reader used after Release")

// Next returns the next event. At the end of the stream it returns io.EOF
// (after returning a final Incomplete event if the stream stopped inside
// one); a read error from the underlying reader is returned as it is, after
// the events read before it. Raw and Data are valid until the next call.
func (s *SSEReader) Next() (Event, error) {
	st := eventState{start: s.pos, lineStart: s.pos}
	if !s.bomDone {
		for len(s.buf) < 3 && s.err == nil {
			s.fill(&st)
		}
		s.bomDone = true
		if bytes.HasPrefix(s.buf, utf8BOM) {
			s.pos += len(utf8BOM)
			st.lineStart = s.pos
		}
	}
	for {
		i := s.pos
		if s.skipLF && i < len(s.buf) {
			s.skipLF = false
			if s.buf[i] == '\n' {
				// The LF completes a CRLF already counted as a line break.
				s.pos++
				if st.lineStart == i {
					st.lineStart = s.pos
				}
				continue
			}
		}
		end := lineEnd(s.buf[i:])
		if end < 0 {
			if len(s.buf)-st.start > s.max {
				return Event{}, s.tooLarge(len(s.buf) - st.start)
			}
			if s.err != nil {
				return s.finish(&st)
			}
			s.fill(&st)
			continue
		}
		end += i
		lineStart := st.lineStart
		s.pos = end + 1
		if s.buf[end] == '\r' {
			if s.pos < len(s.buf) {
				if s.buf[s.pos] == '\n' {
					s.pos++
				}
			} else {
				s.skipLF = true // decide when more input arrives
			}
		}
		st.lineStart = s.pos
		if s.pos-st.start > s.max {
			return Event{}, s.tooLarge(s.pos - st.start)
		}
		if end == lineStart {
			if !st.sawField && !st.sawComment {
				continue // a leading blank line: it stays in this event's Raw
			}
			return s.dispatch(&st, s.pos, false), nil
		}
		s.line(&st, lineStart, end)
	}
}

// lineEnd returns the index of the first CR or LF in b, or -1. Two
// IndexByte calls (vectorised) beat IndexAny's byte-by-byte set test.
func lineEnd(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	if lf < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if cr := bytes.IndexByte(b[:lf], '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// eventState is one event being read; offsets are relative to start, which
// moves when fill slides the buffer.
type eventState struct {
	start, lineStart     int
	sawField, sawComment bool
	name                 string
	dataLines            int
	dataOff, dataLen     int // the only data line so far, relative to start
}

// line interprets one non-blank line buf[from:to].
func (s *SSEReader) line(st *eventState, from, to int) {
	line := s.buf[from:to]
	if line[0] == ':' {
		st.sawComment = true
		return
	}
	st.sawField = true
	name, value, valueAt := line, []byte(nil), to
	if k := bytes.IndexByte(line, ':'); k >= 0 {
		name, value, valueAt = line[:k], line[k+1:], from+k+1
		if len(value) > 0 && value[0] == ' ' {
			value, valueAt = value[1:], valueAt+1
		}
	}
	switch string(name) {
	case "data":
		// One data line (the usual case) is handed out in place; more are
		// joined in a reused scratch buffer.
		switch st.dataLines {
		case 0:
			st.dataOff, st.dataLen = valueAt-st.start, len(value)
		case 1:
			first := s.buf[st.start+st.dataOff : st.start+st.dataOff+st.dataLen]
			s.scratch = append(append(append(s.scratch[:0], first...), '\n'), value...)
		default:
			s.scratch = append(append(s.scratch, '\n'), value...)
		}
		st.dataLines++
	case "event":
		st.name = string(value)
	}
}

// dispatch builds the event buf[st.start:end].
func (s *SSEReader) dispatch(st *eventState, end int, incomplete bool) Event {
	ev := Event{Raw: s.buf[st.start:end], Name: st.name, Comment: st.sawComment && !st.sawField, Incomplete: incomplete}
	switch st.dataLines {
	case 0:
	case 1:
		ev.Data = s.buf[st.start+st.dataOff : st.start+st.dataOff+st.dataLen : st.start+st.dataOff+st.dataLen]
	default:
		ev.Data = s.scratch
	}
	return ev
}

// finish handles the end of input: a partial event becomes an Incomplete
// event (so Raw still round-trips), then the sticky error.
func (s *SSEReader) finish(st *eventState) (Event, error) {
	if st.start == len(s.buf) {
		return Event{}, s.err
	}
	if st.lineStart < len(s.buf) { // a last line without terminator is still a line
		s.line(st, st.lineStart, len(s.buf))
	}
	s.pos = len(s.buf)
	return s.dispatch(st, len(s.buf), st.sawField || st.sawComment), nil
}

func (s *SSEReader) tooLarge(n int) error {
	s.err = fmt.Errorf("%w: more than %d bytes (read %d)", ErrEventTooLarge, s.max, n)
	s.buf, s.pos = s.buf[:0], 0
	return s.err
}

// fill reads more input, first sliding the current event to the front of
// the buffer.
func (s *SSEReader) fill(st *eventState) {
	if st.start > 0 {
		n := copy(s.buf, s.buf[st.start:])
		s.buf = s.buf[:n]
		s.pos -= st.start
		st.lineStart -= st.start
		st.start = 0
	}
	if len(s.buf) == cap(s.buf) {
		nb := make([]byte, len(s.buf), 2*cap(s.buf))
		copy(nb, s.buf)
		s.buf = nb
	}
	n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	if err != nil {
		s.err = err
	}
}
