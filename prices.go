package main

import (
	"fmt"
	"io"

	"github.com/quotagate/quotagate/backend/price"
)

// prices is `quotagate prices update --from FILE`: the price table is
// replaced offline, in the data directory, and only by a file that is a
// valid table as a whole.
func prices(c cli, stdout, stderr io.Writer) int {
	if c.action != "update" || c.from == "" {
		fmt.Fprintln(stderr, "quotagate: prices needs: prices update --from FILE (a price table: USD per 1M tokens, the format of backend/price/prices.json)")
		return 2
	}
	t, err := price.Update(c.data, c.from)
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: prices not updated, nothing changed: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "prices: %d models from %s (source: %s)\n", len(t.Models), c.from, t.Source)
	fmt.Fprintf(stdout, "  written to %s/%s; a gateway uses them from its next start\n", c.data, price.FileName)
	return 0
}
