package gateway

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/openai"
	"github.com/quotagate/quotagate/backend/upstream"
)

// streamState is one stream's queue figures, read through Gateway.Stream and
// Gateway.Streams.
type streamState struct {
	queueCap     int
	queue        atomic.Pointer[chan queued] // the live queue; its len is the occupancy
	queuePeak    atomic.Int64
	backpressure atomic.Int64 // times the reader found the queue full and stopped reading
	relayed      atomic.Int64 // events written to the client
}

// StreamState is a copy of one stream's queue figures.
type StreamState struct {
	RunID        ledger.RunID `json:"run"`
	TenantID     string       `json:"tenant"`
	QueueCap     int          `json:"queue_cap"`
	QueueLen     int          `json:"queue_len"`
	QueuePeak    int          `json:"queue_peak"`
	Backpressure int64        `json:"backpressure"`
	Relayed      int64        `json:"relayed"`
	// Grace: the client left after the finish; the upstream is read on for
	// its usage (Options.FinishGrace).
	Grace bool `json:"grace,omitempty"`
}

// streamCounters are process-wide figures over every stream so far.
type streamCounters struct {
	streams      atomic.Int64
	backpressure atomic.Int64
	queuePeak    atomic.Int64
}

// Counters are the gateway's stream figures since start.
type Counters struct {
	Streams      int64 `json:"streams"`
	Backpressure int64 `json:"backpressure"` // reader stalls on a full queue, all streams
	QueuePeak    int64 `json:"queue_peak"`   // highest queue length of any stream
}

// Counters returns the stream figures since start.
func (g *Gateway) Counters() Counters {
	return Counters{Streams: g.stats.streams.Load(), Backpressure: g.stats.backpressure.Load(), QueuePeak: g.stats.queuePeak.Load()}
}

func raise(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// relayStream relays an SSE response: a reader goroutine parses upstream
// events into a bounded queue, this goroutine writes them to the client.
// A full queue blocks the reader, so a slow client slows the upstream
// (backpressure) instead of growing a buffer.
func (c *call) relayStream(w http.ResponseWriter, resp *upstream.Response) {
	g := c.g
	st := c.stream
	g.stats.streams.Add(1)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	c.mu.Lock()
	c.rc = rc
	c.mu.Unlock()
	w.WriteHeader(http.StatusOK)
	writeErr := c.write(w, rc) // headers and X-Run-Id out before the first event

	queue := make(chan queued, st.queueCap)
	st.queue.Store(&queue)
	var readErr error
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(queue)
		readErr = c.readUpstream(resp.Body, queue)
	}()
	if writeErr == nil {
		writeErr = c.writeClient(w, rc, queue)
	}
	for range queue { // drain so the reader can finish
	}
	<-readerDone

	c.mu.Lock()
	if c.grace != nil {
		c.grace.Stop()
	}
	c.mu.Unlock()
	v := c.meter.Verdict()
	cause := c.cause()
	// The client got every byte relayed (then it may have [DONE]), or at
	// least the whole answer up to its finish reason (then it may be
	// charged on trusted usage). A cancel racing the end must not give a
	// truncated answer that ends in [DONE] and is charged in full (issue 12
	// item 2): events skipped after the cancel count as not received.
	everything := writeErr == nil && !c.dropped.Load() && !c.left.Load()
	whole := everything || c.finishSent.Load()
	var tell error // the terminal error event, if the client can still hear it
	switch {
	case v.Trusted && whole:
		// The provider finished and said what it billed, and the client has
		// the answer; settle even if the client left after it.
		c.settle(v)
	case v.Trusted:
		// The provider did the work, the client did not get all of it: the
		// run ends held for the operator to reconcile.
		status := ledger.RunCancelled
		if cause != nil {
			status = statusFor(cause)
		}
		why := "the client did not receive the whole answer"
		if cause != nil {
			why = fmt.Sprintf("%s before the client received the whole answer", cause)
			tell = clientError(cause)
		}
		c.keep(status, fmt.Sprintf("%s; %s", why, v.Evidence()))
	case cause != nil:
		c.keep(statusFor(cause), fmt.Sprintf("%s; %s", cause, v.Evidence()))
		tell = clientError(cause)
	case writeErr != nil:
		c.keep(ledger.RunCancelled, fmt.Sprintf("%v; %s", writeErr, v.Evidence()))
	case readErr != nil || !c.meter.SawEnd():
		why := "the upstream closed the stream before [DONE]"
		if readErr != nil {
			why = "the upstream stream broke: " + g.opts.Scrub.String(readErr.Error())
		}
		if ue := c.meter.UpstreamError(); ue != "" {
			why += "; it sent an error: " + truncate(ue, 200) // scrubbed when observed
		}
		c.keep(ledger.RunInterrupted, fmt.Sprintf("%s; %s", why, v.Evidence()))
		tell = ledger.Errorf(ledger.CodeUpstreamInterrupt, "the upstream %s stopped mid-stream; the run is interrupted and its reservation is held until reconciled", c.up.Name())
	default:
		// A clean end without trusted usage: the client saw a normal end, the
		// ledger keeps the hold (DESIGN: missing or contradictory usage).
		c.keep(ledger.RunCompleted, v.Evidence())
	}
	// The end marker goes out only once the outcome is on disk.
	if err := c.finish(c.ctx); err != nil && tell == nil {
		tell = ledger.Errorf(ledger.CodeInternal, "the answer was relayed but the ledger could not record it (run %s); its reservation stays held", c.id)
	}
	end := c.doneEvent
	if !everything {
		end = nil // [DONE] only after every byte before it
	}
	if tell != nil {
		end = c.door.streamError(tell)
	}
	if end != nil && writeErr == nil && !c.left.Load() {
		c.mu.Lock()
		_ = rc.SetWriteDeadline(time.Now().Add(g.opts.WriteTimeout))
		c.mu.Unlock()
		if _, err := w.Write(end); err == nil {
			_ = rc.Flush()
		}
	}
}

// readUpstream frames events off the upstream body, has the door's answer
// read each, and queues what the client gets, until EOF, a read error or
// cancellation. The meter observes every event the answer says counts,
// including the usage chunk a client that did not ask for usage is not sent.
func (c *call) readUpstream(body io.Reader, queue chan<- queued) error {
	g := c.g
	st := c.stream
	idle := time.AfterFunc(g.opts.UpstreamTimeout, func() { c.abort(errUpstreamIdle) })
	defer idle.Stop()
	sr := openai.NewSSEReader(body, g.opts.MaxEventBytes)
	defer sr.Release() // every step copies what it keeps
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if cause := c.cause(); cause != nil {
				return cause
			}
			return err
		}
		idle.Reset(g.opts.UpstreamTimeout)
		s := c.ans.event(ev)
		if s.obs.UpstreamError != "" || s.obs.Problem != "" || s.obs.Unreadable {
			s.obs, s.relay = c.scrub(s.obs, s.relay)
		}
		if s.observe {
			c.meter.Observe(s.obs)
		}
		if s.final != nil {
			c.doneEvent = s.final // relayed once the outcome is committed
		}
		if s.relay == nil {
			continue
		}
		raw := queued{b: s.relay, finish: s.finish, more: s.more}
		select {
		case queue <- raw:
		default:
			st.backpressure.Add(1)
			g.stats.backpressure.Add(1)
			raise(&st.queuePeak, int64(len(queue))) // seen full
			select {
			case queue <- raw:
			case <-c.ctx.Done():
				return c.cause()
			}
		}
		// len of the channel is the true occupancy: never above its capacity.
		n := int64(len(queue))
		raise(&st.queuePeak, n)
		raise(&g.stats.queuePeak, n)
	}
}

// writeClient writes queued events to the client until the queue closes or
// a write fails; during an upstream gap it sends keep-alive comments.
func (c *call) writeClient(w http.ResponseWriter, rc *http.ResponseController, queue <-chan queued) error {
	var tick <-chan time.Time
	if ka := c.g.opts.KeepAlive; ka > 0 {
		t := time.NewTicker(ka)
		defer t.Stop()
		tick = t.C
	}
	pending := make([][]byte, 0, maxCoalesce)
	for {
		select {
		case q, ok := <-queue:
			if !ok {
				return nil
			}
			if c.ctx.Err() != nil || c.left.Load() {
				c.dropped.Store(true) // cancelled, or the client left: discard what is still queued
				if q.more {
					// The client left at a finish the answer went on after:
					// it does not have the whole answer, so no grace.
					c.finishSent.Store(false)
					c.abort(errClientGone)
				}
				continue
			}
			// Coalesce: what is already queued goes out with it in one flush
			// (one write syscall per drain, not per event); a lone event is
			// flushed at once, with no added wait (issue 15).
			batch := append(pending[:0], q.b)
			finish, more := q.finish, q.more
			closed := false
		drain:
			for len(batch) < maxCoalesce {
				select {
				case next, ok := <-queue:
					if !ok {
						closed = true
						break drain
					}
					batch = append(batch, next.b)
					finish = next.finish || (finish && !next.more) // the batch ends finished
					more = more || next.more
				default:
					break drain
				}
			}
			pending = batch
			if more {
				c.finishSent.Store(false) // until the finish that follows is written
			}
			if err := c.write(w, rc, batch...); err != nil {
				c.dropped.Store(true)
				return err
			}
			if finish {
				c.finishSent.Store(true)
			}
			c.leftDuringWrite()
			c.stream.relayed.Add(int64(len(batch)))
			if closed {
				return nil
			}
		case <-tick:
			if c.ctx.Err() == nil && !c.left.Load() {
				if err := c.write(w, rc, keepAlive); err != nil {
					return err
				}
				c.leftDuringWrite()
			}
		}
	}
}

var keepAlive = []byte(": keepalive\n\n")

// maxCoalesce bounds how many queued events share one flush.
const maxCoalesce = 32

// idleReader restarts an idle timer on every read that returns bytes.
type idleReader struct {
	r    io.Reader
	idle *time.Timer
	d    time.Duration
}

func (r idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.idle.Reset(r.d)
	}
	return n, err
}

// write sends bs (none: just flush) to the client under a fresh write
// deadline, with one flush. A failed write cancels the upstream call: a client that left or
// stopped reading must not keep the provider generating.
func (c *call) write(w http.ResponseWriter, rc *http.ResponseController, bs ...[]byte) error {
	c.mu.Lock()
	if c.ctx.Err() != nil {
		c.mu.Unlock()
		return c.cause()
	}
	if err := rc.SetWriteDeadline(time.Now().Add(c.g.opts.WriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		c.mu.Unlock()
		return err
	}
	c.writing = true
	c.mu.Unlock()
	var err error
	for _, b := range bs {
		if err != nil {
			break
		}
		if len(b) > 0 {
			_, err = w.Write(b)
		}
	}
	if err == nil {
		err = rc.Flush()
	}
	c.mu.Lock()
	reason := c.reason
	if err != nil && reason == nil && errors.Is(err, os.ErrDeadlineExceeded) {
		// Named before writing clears: a client gone meanwhile must not
		// take the cause from the write timeout that cut it.
		c.reason = errWriteTimeout
	}
	c.writing = false
	c.mu.Unlock()
	if err == nil {
		return nil
	}
	switch {
	case reason != nil:
		return reason // an abort ended the write
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.abort(errWriteTimeout)
		return errWriteTimeout
	}
	c.clientLeft()
	return fmt.Errorf("%w: %v", errClientGone, err)
}

// queued is one event between the upstream reader and the client writer.
type queued struct {
	b      []byte
	finish bool // it carries the finish reason (step.finish)
	more   bool // the answer goes on after an earlier finish (step.more)
}

// relayComplete relays a non-streaming response: the whole body is read
// first, so an upstream failure can still be an HTTP error.
func (c *call) relayComplete(w http.ResponseWriter, resp *upstream.Response) {
	g := c.g
	// The same silence bound as a stream: an upstream that sent its headers
	// and then nothing must not hold the run (and its gate slot) forever.
	idle := time.AfterFunc(g.opts.UpstreamTimeout, func() { c.abort(errUpstreamIdle) })
	b, err := io.ReadAll(io.LimitReader(idleReader{resp.Body, idle, g.opts.UpstreamTimeout}, DefaultResponseBytesMax+1))
	idle.Stop()
	if err == nil && len(b) > DefaultResponseBytesMax {
		err = fmt.Errorf("the upstream body is larger than %d bytes", DefaultResponseBytesMax)
	}
	if err != nil {
		if cause := c.cause(); cause != nil {
			c.keep(statusFor(cause), fmt.Sprintf("%s while reading the upstream's body", cause))
			noRetry(w)
			c.writeError(w, clientError(cause))
			return
		}
		c.keep(ledger.RunInterrupted, "the upstream body broke off: "+g.opts.Scrub.String(err.Error()))
		noRetry(w)
		c.writeError(w, ledger.Errorf(ledger.CodeUpstreamInterrupt, "the upstream %s stopped mid-answer; the run is interrupted and its reservation is held until reconciled", c.up.Name()))
		return
	}
	o, out := c.ans.body(b)
	if o.UpstreamError != "" || o.Problem != "" || o.Unreadable {
		o, out = c.scrub(o, out)
	}
	c.meter.Observe(o)
	v := c.meter.Verdict()
	switch {
	case v.Trusted:
		c.settle(v)
	case o.UpstreamError != "":
		c.keep(ledger.RunCompleted, "the upstream's body is an error: "+truncate(o.UpstreamError, 200)+"; "+v.Evidence()) // scrubbed above
	default:
		c.keep(ledger.RunCompleted, v.Evidence())
	}
	if err := c.finish(c.ctx); err != nil { // the body goes out only once the outcome is on disk
		c.writeError(w, ledger.Errorf(ledger.CodeInternal, "the ledger could not record the answer (run %s); its reservation stays held", c.id))
		return
	}
	if o.UpstreamError != "" && !v.Trusted {
		// A 200 whose body is an error object is no answer: a client SDK
		// would read it as one without choices or content. It gets the
		// door's error instead, with the provider's (scrubbed) words.
		c.writeError(w, ledger.Errorf(ledger.CodeUpstreamError, "the upstream %s answered 200 with an error: %s; the run's reservation is held until reconciled",
			c.up.Name(), truncate(o.UpstreamError, 200)))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(g.opts.WriteTimeout))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// scrub masks secrets in what an upstream said about a failure (issue 12
// item 2: an error event after output started, or a 200 whose body is an
// error object, may echo the provider key): the observation's texts, which
// become run evidence, and — when they are an error or unreadable, not
// output the meter counts — the bytes the client gets.
func (c *call) scrub(o meter.Observation, b []byte) (meter.Observation, []byte) {
	sc := c.g.opts.Scrub
	o.UpstreamError, o.Problem = sc.String(o.UpstreamError), sc.String(o.Problem)
	if (o.UpstreamError != "" || o.Unreadable) && b != nil {
		b = sc.Bytes(b)
	}
	return o, b
}
