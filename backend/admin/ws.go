package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/quotagate/quotagate/backend/live"
)

// Message is what the WebSocket sends: first {"type":"state"} with the
// whole state, then {"type":"delta"} with what changed since the previous
// message (delta.go); Seq counts the socket's messages from 1, so a page
// that sees a gap re-reads the state. The page sends one message back,
// {"type":"rendered"}, once it has painted the first pushed state.
type Message struct {
	Type  string `json:"type"` // "state" or "delta"
	Seq   int64  `json:"seq"`
	State *State `json:"state,omitempty"`
	Delta *Delta `json:"delta,omitempty"`
}

const wsWriteTimeout = 10 * time.Second

// ws upgrades an authenticated, origin-checked request (ServeHTTP did both)
// and pushes state snapshots until the client leaves, the hub drops it as
// slow, or the handler closes.
func (h *Handler) ws(w http.ResponseWriter, r *http.Request) {
	// Subscribe before the first snapshot so no change between the two is lost.
	sub := h.o.Hub.Subscribe()
	defer sub.Close()
	conn, err := h.up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered with an HTTP error
	}
	defer conn.Close()
	h.conns.Add(1)
	defer h.conns.Done()
	s := &wsSession{h: h, conn: conn, origin: r.Header.Get("Origin")}
	h.log.Debug("admin ws connected", "origin", s.origin, "remote", r.RemoteAddr)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gone := s.read()
	if err := s.send(ctx); err != nil {
		h.log.Error("admin ws first snapshot failed", "err", err)
		s.closeWith(websocket.CloseInternalServerErr, "state unavailable")
		return
	}
	s.push(ctx, sub, gone)
}

// wsSession is one dashboard's socket: the state it was last sent and how
// many messages it got.
type wsSession struct {
	h      *Handler
	conn   *websocket.Conn
	origin string
	sent   State
	seq    int64
}

// read reads pongs, the close and the page's "rendered" until the socket
// fails or stays silent longer than Options.Idle; the channel closes then.
func (s *wsSession) read() <-chan struct{} {
	conn := s.conn
	conn.SetReadLimit(4 << 10)
	alive := func() { _ = conn.SetReadDeadline(time.Now().Add(s.h.o.Idle)) }
	alive()
	conn.SetPongHandler(func(string) error { alive(); return nil })
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		told := false
		for {
			var m struct {
				Type string `json:"type"`
				Lang string `json:"lang"` // the page's language (the desktop smoke checks zh-CN)
			}
			if err := conn.ReadJSON(&m); err != nil {
				var syntax *json.SyntaxError
				if errors.As(err, &syntax) {
					continue // a malformed message is ignored, not fatal
				}
				return
			}
			alive()
			if m.Type == "rendered" && !told {
				told = true // the page painted a pushed state (the desktop smoke waits for this)
				s.h.log.Debug("admin ws page rendered the state", "origin", s.origin, "lang", m.Lang)
			}
		}
	}()
	return gone
}

// send writes the state: whole in the first message, as a delta from the
// last one sent after it.
func (s *wsSession) send(ctx context.Context) error {
	st, err := s.h.snapshot(ctx)
	if err != nil {
		return err
	}
	s.seq++
	m := Message{Type: "state", Seq: s.seq, State: &st}
	if s.seq > 1 {
		d := Diff(s.sent, st)
		m = Message{Type: "delta", Seq: s.seq, Delta: &d}
	}
	s.sent = st
	_ = s.conn.SetWriteDeadline(time.Now().Add(wsWriteTimeout))
	return s.conn.WriteJSON(m)
}

func (s *wsSession) closeWith(code int, text string) {
	_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text),
		time.Now().Add(time.Second))
}

// push sends a snapshot after each burst of changes (at most one per
// Options.Coalesce) and every Options.Refresh, and pings, until the page
// leaves, the hub drops the subscription or the handler closes.
func (s *wsSession) push(ctx context.Context, sub *live.Subscription, gone <-chan struct{}) {
	h := s.h
	last := time.Now()
	coalesce := time.NewTimer(time.Hour)
	coalesce.Stop()
	pending := false
	refresh := time.NewTicker(h.o.Refresh)
	defer refresh.Stop()
	ping := time.NewTicker(h.o.Idle / 2) // a browser answers pings by itself
	defer ping.Stop()
	for {
		select {
		case _, ok := <-sub.C():
			if !ok {
				if errors.Is(sub.Err(), live.ErrSlowSubscriber) {
					h.log.Warn("admin ws dropped as slow", "origin", s.origin)
				}
				s.closeWith(websocket.CloseTryAgainLater, "too slow; re-fetch the state")
				return
			}
			if !pending { // a burst becomes one snapshot, at most one per Coalesce
				pending = true
				coalesce.Reset(max(0, h.o.Coalesce-time.Since(last)))
			}
			continue
		case <-coalesce.C:
			pending = false
		case <-refresh.C:
			if pending {
				continue
			}
		case <-ping.C:
			if err := s.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(wsWriteTimeout)); err != nil {
				h.log.Debug("admin ws closed", "origin", s.origin, "err", err)
				return
			}
			continue
		case <-gone:
			h.log.Debug("admin ws disconnected", "origin", s.origin)
			return
		case <-h.closing:
			s.closeWith(websocket.CloseGoingAway, "server shutting down")
			return
		}
		if err := s.send(ctx); err != nil {
			h.log.Debug("admin ws closed", "origin", s.origin, "err", err)
			return
		}
		last = time.Now()
	}
}
