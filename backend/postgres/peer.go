package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
)

// commitNote is the payload of a commit NOTIFY: the changes one
// transaction of instance I committed (PostgreSQL delivers a NOTIFY on
// commit, and only then, in commit order). A transaction with more changes
// than fit sends several notes, in order.
type commitNote struct {
	Instance string          `json:"i"`
	Changes  []ledger.Change `json:"c"`
}

// notifyChunk bounds the changes in one note (PostgreSQL's payload limit
// is 8000 bytes; a change is a few hundred).
const notifyChunk = 12

// resyncChange tells the hook that other gateways' changes may have been
// missed (the listening connection was lost): everything may have moved.
var resyncChange = ledger.Change{Kind: ledger.AuditConfig, Actor: ledger.System("resync")}

// PeerOptions connect this gateway to the others sharing the ledger.
type PeerOptions struct {
	// Cancel closes the upstream connection of run id if it is in flight in
	// this gateway and reports whether it was; operator tells the
	// operator's cancel from the run owner's.
	Cancel func(id ledger.RunID, operator bool) bool
	Logger *slog.Logger
}

type peer struct {
	opts    PeerOptions
	stop    context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	waiters map[string]chan cancelReply
	seen    map[string]time.Time // cancel requests acted on, by req: a resent one is answered once
}

type cancelRequest struct {
	Op       string `json:"op"` // "cancel" or "reply"
	To       string `json:"to"`
	From     string `json:"from"`
	Req      string `json:"req"`
	Run      string `json:"run,omitempty"`
	Operator bool   `json:"operator,omitempty"`
	OK       bool   `json:"ok,omitempty"`
	Code     string `json:"code,omitempty"`
	Message  string `json:"msg,omitempty"`
}

type cancelReply struct {
	ok   bool
	code string
	msg  string
}

// CancelTimeout bounds how long a cancel routed to another instance waits
// for its answer.
const CancelTimeout = 5 * time.Second

// Serve listens (LISTEN, on one connection of its own) for the other
// gateways' commits and for cancels routed to this one, until Close. It
// returns once listening.
func (s *Store) Serve(ctx context.Context, o PeerOptions) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	lctx, stop := context.WithCancel(context.Background())
	p := &peer{opts: o, stop: stop, done: make(chan struct{}), waiters: map[string]chan cancelReply{}, seen: map[string]time.Time{}}
	ready := make(chan error, 1)
	go s.listen(lctx, p, ready)
	select {
	case err := <-ready:
		if err != nil {
			stop()
			<-p.done
			return fmt.Errorf("listen for other gateways: %w", err)
		}
	case <-ctx.Done():
		stop()
		<-p.done
		return ctx.Err()
	}
	s.mu.Lock()
	s.peer = p
	s.mu.Unlock()
	return nil
}

func (s *Store) listen(ctx context.Context, p *peer, ready chan<- error) {
	defer close(p.done)
	first := true
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, p, func() {
			if first {
				ready <- nil
				first = false
			} else {
				s.hooks.Push([]ledger.Change{resyncChange}, nil)
			}
		})
		if first {
			ready <- err
			return
		}
		if ctx.Err() != nil {
			return
		}
		p.opts.Logger.Warn("lost the connection that listens for other gateways; reconnecting", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (s *Store) listenOnce(ctx context.Context, p *peer, listening func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, ch := range []string{s.chCommit, s.chCancel} {
		if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		switch n.Channel {
		case s.chCommit:
			s.onCommit(n.Payload)
		case s.chCancel:
			s.onCancel(p, n.Payload)
		}
	}
}

// onCommit hands another gateway's committed changes to the commit hook,
// in the order their NOTIFYs arrive (their commit order).
func (s *Store) onCommit(payload string) {
	var n commitNote
	if err := json.Unmarshal([]byte(payload), &n); err != nil || len(n.Changes) == 0 || n.Instance == s.opts.Instance {
		return
	}
	for i := range n.Changes {
		n.Changes[i].FromPeer = true
	}
	s.hooks.Push(n.Changes, nil)
}

func (s *Store) onCancel(p *peer, payload string) {
	var m cancelRequest
	if err := json.Unmarshal([]byte(payload), &m); err != nil || m.To != s.opts.Instance {
		return
	}
	switch m.Op {
	case "reply":
		p.mu.Lock()
		ch := p.waiters[m.Req]
		p.mu.Unlock()
		if ch != nil {
			ch <- cancelReply{ok: m.OK, code: m.Code, msg: m.Message}
		}
	case "cancel":
		if p.first(m.Req) {
			go s.answerCancel(p, m)
		}
	}
}

// first reports whether req is a cancel request not acted on yet; the
// asking gateway resends its request until it is answered.
func (p *peer) first(req string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for r, at := range p.seen {
		if now.Sub(at) > 2*CancelTimeout {
			delete(p.seen, r)
		}
	}
	if _, ok := p.seen[req]; ok {
		return false
	}
	p.seen[req] = now
	return true
}

// answerCancel is the owner's side of a routed cancel: it closes the
// upstream if the run is in flight here and answers the asking instance.
func (s *Store) answerCancel(p *peer, m cancelRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), CancelTimeout)
	defer cancel()
	r := cancelRequest{Op: "reply", To: m.From, From: s.opts.Instance, Req: m.Req}
	id := ledger.RunID(m.Run)
	if p.opts.Cancel != nil && p.opts.Cancel(id, m.Operator) {
		r.OK = true
	} else if run, err := s.Run(ctx, id); err != nil {
		r.Code, r.Message = ledger.ErrorCode(err), ledger.ErrorMessage(err)
	} else if run.Status.Ended() {
		r.Code, r.Message = ledger.CodeRunEnded, fmt.Sprintf("the run %s already ended (%s)", id, run.Status)
	} else {
		r.Code, r.Message = ledger.CodeConflict, fmt.Sprintf("the run %s is %s but not in flight in instance %s", id, run.Status, s.opts.Instance)
	}
	if err := s.notify(ctx, s.chCancel, r); err != nil {
		p.opts.Logger.Warn("answer a routed cancel", "run", id, "err", err)
	}
}

func (s *Store) notify(ctx context.Context, channel string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, string(b))
	return err
}

// CancelElsewhere routes the cancel of run, open in the ledger but not in
// flight in this gateway, to the instance that relays it, which closes the
// upstream connection. Errors: CodeRunEnded, CodeConflict (the owner is not
// running — its runs end interrupted when its lease expires — or did not
// answer in CancelTimeout), CodeRunNotFound.
func (s *Store) CancelElsewhere(ctx context.Context, run ledger.Run, operator bool) error {
	s.mu.Lock()
	p := s.peer
	s.mu.Unlock()
	owner, err := s.RunInstance(ctx, run.ID)
	if err != nil {
		return err
	}
	if p == nil || owner == s.opts.Instance {
		return ledger.Errorf(ledger.CodeConflict, "the run %s is %s but not in flight in this gateway", run.ID, run.Status)
	}
	var live bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM instances WHERE name = $1 AND expires_at >= `+dbNow+`)`,
		owner).Scan(&live); err != nil {
		return fmt.Errorf("look up instance %s: %w", owner, err)
	}
	if !live {
		return ledger.Errorf(ledger.CodeConflict,
			"the run %s is relayed by instance %s, which is not running; its runs end interrupted (holds kept) once its lease expires", run.ID, owner)
	}
	var b [12]byte
	rand.Read(b[:])
	req := hex.EncodeToString(b[:])
	ch := make(chan cancelReply, 1)
	p.mu.Lock()
	p.waiters[req] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waiters, req)
		p.mu.Unlock()
	}()
	m := cancelRequest{Op: "cancel", To: owner, From: s.opts.Instance, Req: req, Run: string(run.ID), Operator: operator}
	if err := s.notify(ctx, s.chCancel, m); err != nil {
		return fmt.Errorf("route the cancel of run %s to instance %s: %w", run.ID, owner, err)
	}
	// A NOTIFY reaches only the connections listening when it commits: the
	// owner's listening connection may be reconnecting (a database restart,
	// a dropped network), so the request is sent again until answered.
	t := time.NewTimer(CancelTimeout)
	defer t.Stop()
	again := time.NewTicker(cancelResend)
	defer again.Stop()
	for {
		select {
		case r := <-ch:
			if r.ok {
				return nil
			}
			return ledger.Errorf(r.code, "%s", r.msg)
		case <-again.C:
			_ = s.notify(ctx, s.chCancel, m) // the first one's error was answered; a later one's is the timeout's
		case <-t.C:
			return ledger.Errorf(ledger.CodeConflict, "instance %s, which relays run %s, did not answer the cancel within %v", owner, run.ID, CancelTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// cancelResend spaces the resent requests of a routed cancel.
const cancelResend = 500 * time.Millisecond

func (s *Store) stopPeer() {
	s.mu.Lock()
	p := s.peer
	s.peer = nil
	s.mu.Unlock()
	if p != nil {
		p.stop()
		<-p.done
	}
}

// notifyChanges sends w's changes on the commit channel inside w, after
// the audit rows' seqs are known: the other gateways receive them when, and
// only if, w commits.
func (s *Store) notifyChanges(ctx context.Context, w *wtx) error {
	for cs := w.changes; len(cs) > 0; {
		n := min(len(cs), notifyChunk)
		b, err := json.Marshal(commitNote{Instance: s.opts.Instance, Changes: cs[:n]})
		if err != nil {
			return err
		}
		if _, err := w.Exec(ctx, `SELECT pg_notify($1, $2)`, s.chCommit, string(b)); err != nil {
			return fmt.Errorf("notify commit: %w", err)
		}
		cs = cs[n:]
	}
	return nil
}
