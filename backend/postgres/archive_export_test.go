package postgres

// SetArchiveStep makes archiving stop at a step as a crash would (see
// archiveStep); it returns the undo.
func SetArchiveStep(fn func(step string) error) (undo func()) {
	old := archiveStep
	archiveStep = fn
	return func() { archiveStep = old }
}

// SetArchivePartRuns makes each archive transaction move n runs; it
// returns the undo.
func SetArchivePartRuns(n int) (undo func()) {
	old := archivePartRuns
	archivePartRuns = n
	return func() { archivePartRuns = old }
}
