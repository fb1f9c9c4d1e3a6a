// Package archive is the file a closed month of the ledger is moved into:
// gzip-compressed JSON Lines, one header line and then one line per row,
// each row as its columns by name, with a SHA-256 of the row itself. The
// rows come in parts — a few thousand runs in the order they were
// admitted, then their audit rows (by seq) — each the rows one transaction of the ledger deletes, so that
// archiving a month never holds the ledger's writer for longer than one
// part. A Summarizer turns the rows into the summaries the ledger keeps
// (one per tenant, budget period and part: counts, units, money, first
// and last seq, and a hash over the rows' hashes), so that the store that
// archives and `verify --archive` that re-reads the file compute them
// alike; ReadParts hands a file back part by part.
//
// Rows are kept by column name rather than as a fixed struct, so that a
// month archived by one version of the schema restores into the next as
// long as its columns are still there. JSON keeps integers and text
// exactly; runs and audit rows hold nothing else.
//
// A file is written whole to a temporary name, synced, and only then
// renamed into place (Writer.Commit): a crash leaves the month either not
// written or written whole, never half.
package archive
