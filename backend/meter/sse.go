package meter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
var ErrEventTooLarge = errors.New("meter: SSE event too large")

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
	skipLF bool
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
	return &SSEReader{r: r, max: maxEventBytes, buf: make([]byte, 0, 4096)}
}

// Next returns the next event. At the end of the stream it returns io.EOF
// (after returning a final Incomplete event if the stream stopped inside
// one); a read error from the underlying reader is returned as it is, after
// the events read before it. Raw and Data are valid until the next call.
func (s *SSEReader) Next() (Event, error) {
	var ev Event
	start := s.pos // the event's raw bytes are buf[start:s.pos]
	lineStart := s.pos
	if !s.bomDone {
		for len(s.buf) < 3 && s.err == nil {
			start, lineStart = s.fill(start, lineStart)
		}
		s.bomDone = true
		if bytes.HasPrefix(s.buf, utf8BOM) {
			s.pos += len(utf8BOM)
			lineStart = s.pos
		}
	}
	sawField := false   // a non-comment, non-blank line
	sawComment := false // a comment line
	var data []byte
	haveData := false
	for {
		// Find the next line terminator in the buffered input.
		i := s.pos
		if s.skipLF && i < len(s.buf) {
			s.skipLF = false
			if s.buf[i] == '\n' {
				s.pos++
				// The LF belongs to a CRLF already counted as a line break.
				if lineStart == i {
					lineStart = s.pos
				}
				continue
			}
		}
		j := bytes.IndexAny(s.buf[i:], "\r\n")
		if j < 0 {
			// Need more input.
			if len(s.buf)-start > s.max {
				return Event{}, s.tooLarge(len(s.buf) - start)
			}
			if s.err != nil {
				return s.finish(start, lineStart, &ev, data, haveData, sawField, sawComment)
			}
			start, lineStart = s.fill(start, lineStart)
			continue
		}
		end := i + j // terminator position
		line := s.buf[lineStart:end]
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
		lineStart = s.pos
		if s.pos-start > s.max {
			return Event{}, s.tooLarge(s.pos - start)
		}
		if len(line) == 0 {
			if !sawField && !sawComment {
				continue // leading blank line: keep it in this event's Raw
			}
			ev.Raw = s.buf[start:s.pos]
			ev.Comment = sawComment && !sawField
			if haveData {
				ev.Data = data
				if ev.Data == nil {
					ev.Data = []byte{}
				}
			}
			return ev, nil
		}
		if line[0] == ':' {
			sawComment = true
			continue
		}
		sawField = true
		name, value := line, []byte(nil)
		if k := bytes.IndexByte(line, ':'); k >= 0 {
			name, value = line[:k], line[k+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "data":
			if haveData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			haveData = true
		case "event":
			ev.Name = string(value)
		}
	}
}

// finish handles the end of input: a partial event becomes an Incomplete
// event (so Raw still round-trips), then the sticky error.
func (s *SSEReader) finish(start, lineStart int, ev *Event, data []byte, haveData, sawField, sawComment bool) (Event, error) {
	if s.pos >= len(s.buf) && start == len(s.buf) {
		return Event{}, s.err
	}
	// A last line without terminator is still a line.
	if lineStart < len(s.buf) {
		line := s.buf[lineStart:]
		if line[0] == ':' {
			sawComment = true
		} else {
			sawField = true
			name, value := line, []byte(nil)
			if k := bytes.IndexByte(line, ':'); k >= 0 {
				name, value = line[:k], line[k+1:]
				if len(value) > 0 && value[0] == ' ' {
					value = value[1:]
				}
			}
			switch string(name) {
			case "data":
				if haveData {
					data = append(data, '\n')
				}
				data = append(data, value...)
				haveData = true
			case "event":
				ev.Name = string(value)
			}
		}
	}
	s.pos = len(s.buf)
	ev.Raw = s.buf[start:]
	ev.Comment = sawComment && !sawField
	ev.Incomplete = sawField || sawComment
	if haveData {
		ev.Data = data
		if ev.Data == nil {
			ev.Data = []byte{}
		}
	}
	return *ev, nil
}

func (s *SSEReader) tooLarge(n int) error {
	s.err = fmt.Errorf("%w: more than %d bytes (read %d)", ErrEventTooLarge, s.max, n)
	s.buf, s.pos = s.buf[:0], 0
	return s.err
}

// fill reads more input, first sliding the current event to the front of
// the buffer. It returns the event's new start and line start.
func (s *SSEReader) fill(start, lineStart int) (int, int) {
	if start > 0 {
		n := copy(s.buf, s.buf[start:])
		s.buf = s.buf[:n]
		s.pos -= start
		lineStart -= start
		start = 0
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
	return start, lineStart
}
