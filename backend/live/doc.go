// Package live fans state changes out to dashboard subscribers.
//
// Every committed ledger transaction reaches the hub once, as a KindLedger
// Change carrying its []ledger.Change (the server wires the ledger's commit
// hook here); the quota guard's unrecorded state and config reloads publish
// KindQuota and KindConfig. A Change says only what moved;
// subscribers re-read the state they show, so a lost Change costs a refetch,
// never a wrong figure.
//
// # Concurrency
//
// Publish never blocks: each subscriber has a small bounded buffer, and a
// subscriber whose buffer is full is dropped — its channel is closed and Err
// reports ErrSlowSubscriber. The dashboard then reconnects and re-fetches the
// snapshot. A slow browser tab can therefore never slow the relay (STYLE §10.9,
// seed 000: slow-consumer backpressure belongs to the consumer).
//
// # What is deliberately absent
//
// No replay and no history: the snapshot is the source of truth.
package live
