// Package gate puts a concurrency limit with a short, bounded wait queue in
// front of each upstream (seed 003).
//
// Seed 003's compute gate had two slots and answered the third caller with an
// immediate 429; the conversation died. Here a caller that finds every slot
// taken waits in a strict FIFO queue of at most MaxWaiters callers for at most
// MaxWait (defaults 2, 4, 8 s, the seed's figures). Past either bound it gets
// 429 upstream_busy with a Retry-After of whole seconds, at once: nobody hangs
// without bound.
//
// # Two phases
//
// Gate.Enter never blocks: it either grants a slot, gives a place in the
// queue, or refuses. The gateway calls it BEFORE admitting the run so that it
// knows whether to record the run as queued (ledger.AdmitRequest.Queued), and
// only then blocks in Ticket.Wait; when Wait returns a slot for a queued
// ticket, the gateway moves the run to active (ledger.Store.Start). A refusal
// at Enter therefore costs no ledger write at all. Acquire is Enter+Wait for
// callers that do not care.
//
// # Concurrency
//
// One mutex per gate guards the slot count and the queue. A release hands its
// slot straight to the first waiter (the count does not drop), so a newcomer
// can never overtake the queue: while anyone waits, every slot is taken.
// A waiter that gives up (context cancelled, or Ticket.Abandon) after a
// release already handed it the slot passes the slot on to the next waiter or
// back to the gate, so no slot leaks. A waiter whose max_wait expires in the
// same instant as it was granted keeps the slot: it did not wait longer than
// promised.
//
// # What is deliberately absent
//
// No priorities and no per-tenant fairness inside the queue: the queue is
// short (four places) and FIFO is what a person waiting expects.
package gate
