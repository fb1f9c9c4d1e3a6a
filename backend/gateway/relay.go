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
	"github.com/quotagate/quotagate/backend/scrub"
)

// relay carries one run's answer from the upstream to the client: it
// reads the upstream through the door's answer, has the meter run observe
// what counts, and writes what the client gets under the write and idle
// timeouts. It knows what the client got — the outcome is decided from
// that — but not the ledger.
type relay struct {
	line   *lifeline
	ans    answer       // reads the upstream's answer, renders the client's
	meter  *meter.Run   // reserve → observe → verdict, created once at admission
	stream *streamState // nil for non-streaming runs
	stats  *streamCounters
	scrub  *scrub.Scrubber
	limits relayLimits

	doneEvent []byte // the upstream's [DONE], held back until the outcome is committed
	// named, when set, is told the provider's id once the answer names it
	// (runRecord.nameAfter); nil: the id is kept only at the run's end.
	named func(providerID string)

	// What the client got of a stream.
	finishSent atomic.Bool // the event with the finish reason was written to the client
	dropped    atomic.Bool // a relayed event was not written (skipped after a cancel, or a write failed)
	left       atomic.Bool // the client left after the finish reason: the upstream is read for a grace
	grace      *time.Timer // ends that grace (under line.mu)
}

// relayLimits are the Options a relay works within.
type relayLimits struct {
	writeTimeout    time.Duration // Options.WriteTimeout
	upstreamTimeout time.Duration // Options.UpstreamTimeout
	keepAlive       time.Duration // Options.KeepAlive; <= 0 off
	finishGrace     time.Duration // Options.FinishGrace; < 0 off
	maxEventBytes   int           // Options.MaxEventBytes
}

// clientLeft is called when the client's connection is gone (its request
// context ended, or a write to it failed). Before the finish reason reached
// it, the upstream call is cancelled at once; after it, the upstream is
// read for the finish grace more, so that its usage and [DONE] still settle
// a run whose answer the client has whole (many clients stop reading at
// the finish reason) — unless the grace is off.
func (r *relay) clientLeft() {
	l := r.line
	l.mu.Lock()
	writing := l.writing
	l.leftMid = l.leftMid || writing
	l.mu.Unlock()
	if writing {
		// The write in progress fails and says why (a write timeout, a
		// closed connection) — or succeeds into the socket's buffer, and
		// the writer comes back here once it has noted what it wrote.
		return
	}
	if !r.finishSent.Load() || r.limits.finishGrace < 0 {
		l.abort(errClientGone)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.left.Swap(true) {
		return
	}
	r.grace = time.AfterFunc(r.limits.finishGrace, func() { l.abort(errClientGone) })
}

// leftDuringWrite acts on a departure clientLeft saw while a write was in
// progress that then succeeded (else the departure was lost: with nothing
// more to write, the upstream was read to its end, grace or not).
func (r *relay) leftDuringWrite() {
	l := r.line
	l.mu.Lock()
	left := l.leftMid
	l.leftMid = false
	l.mu.Unlock()
	if left {
		r.clientLeft()
	}
}

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

// relayEvents relays an SSE response's events: a reader goroutine parses
// upstream events into a bounded queue, this goroutine writes them to the
// client. A full queue blocks the reader, so a slow client slows the
// upstream (backpressure) instead of growing a buffer. It returns what the
// client got; the stream's last event (end) waits for the outcome.
func (r *relay) relayEvents(w http.ResponseWriter, body io.Reader) (*http.ResponseController, delivery) {
	st := r.stream
	r.stats.streams.Add(1)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	r.line.mu.Lock()
	r.line.rc = rc
	r.line.mu.Unlock()
	w.WriteHeader(http.StatusOK)
	writeErr := r.write(w, rc) // headers and X-Run-Id out before the first event

	queue := make(chan queued, st.queueCap)
	st.queue.Store(&queue)
	var readErr error
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(queue)
		readErr = r.readUpstream(body, queue)
	}()
	if writeErr == nil {
		writeErr = r.writeClient(w, rc, queue)
	}
	for range queue { // drain so the reader can finish
	}
	<-readerDone

	r.line.mu.Lock()
	if r.grace != nil {
		r.grace.Stop()
	}
	r.line.mu.Unlock()
	d := delivery{writeErr: writeErr}
	if readErr != nil {
		d.readErr = r.scrub.String(readErr.Error())
	}
	d.everything = writeErr == nil && !r.dropped.Load() && !r.left.Load()
	d.whole = d.everything || r.finishSent.Load()
	return rc, d
}

// end writes the stream's last event once the outcome is on disk: the
// terminal error event tell when there is one, else the upstream's end
// marker when the client got every byte before it — to a client that is
// still there.
func (r *relay) end(w http.ResponseWriter, rc *http.ResponseController, d delivery, tell []byte) {
	end := r.doneEvent
	if !d.everything {
		end = nil // [DONE] only after every byte before it
	}
	if tell != nil {
		end = tell
	}
	if end == nil || d.writeErr != nil || r.left.Load() {
		return
	}
	r.line.mu.Lock()
	_ = rc.SetWriteDeadline(time.Now().Add(r.limits.writeTimeout))
	r.line.mu.Unlock()
	if _, err := w.Write(end); err == nil {
		_ = rc.Flush()
	}
}

// readUpstream frames events off the upstream body, has the door's answer
// read each, and queues what the client gets, until EOF, a read error or
// cancellation. The meter observes every event the answer says counts,
// including the usage chunk a client that did not ask for usage is not sent.
func (r *relay) readUpstream(body io.Reader, queue chan<- queued) error {
	idle := time.AfterFunc(r.limits.upstreamTimeout, func() { r.line.abort(errUpstreamIdle) })
	defer idle.Stop()
	sr := openai.NewSSEReader(body, r.limits.maxEventBytes)
	defer sr.Release() // every step copies what it keeps
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if cause := r.line.cause(); cause != nil {
				return cause
			}
			return err
		}
		idle.Reset(r.limits.upstreamTimeout)
		s := r.ans.event(ev)
		if s.obs.UpstreamError != "" || s.obs.Problem != "" || s.obs.Unreadable {
			s.obs, s.relay = r.scrubbed(s.obs, s.relay)
		}
		if s.observe {
			r.meter.Observe(s.obs)
			if r.named != nil {
				if id := r.meter.ProviderID(); id != "" {
					r.named(id)
					r.named = nil
				}
			}
		}
		if s.final != nil {
			r.doneEvent = s.final // relayed once the outcome is committed
		}
		if s.relay == nil {
			continue
		}
		if err := r.enqueue(queue, queued{b: s.relay, finish: s.finish, more: s.more}); err != nil {
			return err
		}
	}
}

// enqueue queues q for the writer, waiting while the queue is full (the
// backpressure that slows the upstream read) until the run is cancelled.
func (r *relay) enqueue(queue chan<- queued, q queued) error {
	st := r.stream
	select {
	case queue <- q:
	default:
		st.backpressure.Add(1)
		r.stats.backpressure.Add(1)
		raise(&st.queuePeak, int64(len(queue))) // seen full
		select {
		case queue <- q:
		case <-r.line.ctx.Done():
			return r.line.cause()
		}
	}
	// len of the channel is the true occupancy: never above its capacity.
	n := int64(len(queue))
	raise(&st.queuePeak, n)
	raise(&r.stats.queuePeak, n)
	return nil
}

// writeClient writes queued events to the client until the queue closes or
// a write fails; during an upstream gap it sends keep-alive comments.
func (r *relay) writeClient(w http.ResponseWriter, rc *http.ResponseController, queue <-chan queued) error {
	var tick <-chan time.Time
	if ka := r.limits.keepAlive; ka > 0 {
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
			if r.line.ctx.Err() != nil || r.left.Load() {
				r.discard(q)
				continue
			}
			batch, closed, err := r.writeBatch(w, rc, queue, q, pending[:0])
			if err != nil || closed {
				return err
			}
			pending = batch
		case <-tick:
			if r.line.ctx.Err() == nil && !r.left.Load() {
				if err := r.write(w, rc, keepAlive); err != nil {
					return err
				}
				r.leftDuringWrite()
			}
		}
	}
}

// discard drops q, still queued after a cancel or after the client left.
func (r *relay) discard(q queued) {
	r.dropped.Store(true)
	if q.more {
		// The client left at a finish the answer went on after: it does
		// not have the whole answer, so no grace.
		r.finishSent.Store(false)
		r.line.abort(errClientGone)
	}
}

// writeBatch writes q and what is already queued behind it (up to
// maxCoalesce events, into batch) with one flush: one write syscall per
// drain, not per event; a lone event is flushed at once, with no added
// wait. closed: the queue closed behind the batch.
func (r *relay) writeBatch(w http.ResponseWriter, rc *http.ResponseController, queue <-chan queued, q queued, batch [][]byte) (_ [][]byte, closed bool, err error) {
	batch = append(batch, q.b)
	finish, more := q.finish, q.more
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
	if more {
		r.finishSent.Store(false) // until the finish that follows is written
	}
	if err := r.write(w, rc, batch...); err != nil {
		r.dropped.Store(true)
		return batch, closed, err
	}
	if finish {
		r.finishSent.Store(true)
	}
	r.leftDuringWrite()
	r.stream.relayed.Add(int64(len(batch)))
	return batch, closed, nil
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
func (r *relay) write(w http.ResponseWriter, rc *http.ResponseController, bs ...[]byte) error {
	l := r.line
	l.mu.Lock()
	if l.ctx.Err() != nil {
		l.mu.Unlock()
		return l.cause()
	}
	if err := rc.SetWriteDeadline(time.Now().Add(r.limits.writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		l.mu.Unlock()
		return err
	}
	l.writing = true
	l.mu.Unlock()
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
	l.mu.Lock()
	reason := l.reason
	if err != nil && reason == nil && errors.Is(err, os.ErrDeadlineExceeded) {
		// Named before writing clears: a client gone meanwhile must not
		// take the cause from the write timeout that cut it.
		l.reason = errWriteTimeout
	}
	l.writing = false
	l.mu.Unlock()
	if err == nil {
		return nil
	}
	switch {
	case reason != nil:
		return reason // an abort ended the write
	case errors.Is(err, os.ErrDeadlineExceeded):
		l.abort(errWriteTimeout)
		return errWriteTimeout
	}
	r.clientLeft()
	return fmt.Errorf("%w: %v", errClientGone, err)
}

// queued is one event between the upstream reader and the client writer.
type queued struct {
	b      []byte
	finish bool // it carries the finish reason (step.finish)
	more   bool // the answer goes on after an earlier finish (step.more)
}

// readWhole reads a non-streaming body whole, under the same silence bound
// as a stream: an upstream that sent its headers and then nothing must not
// hold the run (and its gate slot) forever.
func (r *relay) readWhole(body io.Reader) ([]byte, error) {
	idle := time.AfterFunc(r.limits.upstreamTimeout, func() { r.line.abort(errUpstreamIdle) })
	b, err := io.ReadAll(io.LimitReader(idleReader{body, idle, r.limits.upstreamTimeout}, DefaultResponseBytesMax+1))
	idle.Stop()
	if err == nil && len(b) > DefaultResponseBytesMax {
		err = fmt.Errorf("the upstream body is larger than %d bytes", DefaultResponseBytesMax)
	}
	return b, err
}

// observeWhole has the door's answer read a whole body and the meter
// observe it; it returns the observation (scrubbed) and the client's body.
func (r *relay) observeWhole(b []byte) (meter.Observation, []byte) {
	o, out := r.ans.body(b)
	if o.UpstreamError != "" || o.Problem != "" || o.Unreadable {
		o, out = r.scrubbed(o, out)
	}
	r.meter.Observe(o)
	return o, out
}

// writeWhole writes a non-streaming answer's body.
func (r *relay) writeWhole(w http.ResponseWriter, out []byte) {
	w.Header().Set("Content-Type", "application/json")
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(r.limits.writeTimeout))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// scrubbed masks secrets in what an upstream said about a failure (an
// error event after output started, or a 200 whose body is an error
// object, may echo the provider key): the observation's texts, which
// become run evidence, and — when they are an error or unreadable, not
// output the meter counts — the bytes the client gets.
func (r *relay) scrubbed(o meter.Observation, b []byte) (meter.Observation, []byte) {
	sc := r.scrub
	o.UpstreamError, o.Problem = sc.String(o.UpstreamError), sc.String(o.Problem)
	if (o.UpstreamError != "" || o.Unreadable) && b != nil {
		b = sc.Bytes(b)
	}
	return o, b
}
