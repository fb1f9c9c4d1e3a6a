// Command gen writes backend/price/prices.json, the embedded price table,
// from a git clone of models.dev at one commit, taking only the models
// listed in models.txt and adding quotagate's own prices (own.json) for
// the simulated demo models. From backend/price:
//
//	MODELS_DEV=/path/to/models.dev go generate
//
// Each listed model's providers/<provider>/models/<model>.toml gives its
// [cost] table in US dollars per 1M tokens: input, output, cache_read (the
// cached input price) and cache_write; a missing cache price is the input
// price, since the provider charges no other. The numbers are read as
// text, never as floats, so the table holds exactly what models.dev says.
// Tiered prices ([[cost.tiers]], e.g. above 200k tokens of context) are
// left out: the base price is taken. A model with a reasoning price other
// than its output price is refused, because a run prices its reasoning as
// output.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strings"

	"github.com/quotagate/quotagate/backend/price"
)

func main() {
	src := flag.String("src", os.Getenv("MODELS_DEV"), "a git clone of github.com/anomalyco/models.dev (bare or not)")
	rev := flag.String("rev", "HEAD", "the commit to take the prices from")
	list := flag.String("models", "internal/gen/models.txt", "the models to take, one provider/model a line")
	own := flag.String("own", "internal/gen/own.json", "quotagate's own prices, a price file")
	out := flag.String("o", "prices.json", "the table to write")
	flag.Parse()
	if err := run(*src, *rev, *list, *own, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(src, rev, list, own, out string) error {
	if src == "" {
		return fmt.Errorf("say where models.dev is: -src DIR or MODELS_DEV=DIR")
	}
	commit, err := git(src, "log", "-1", "--format=%H %cs", rev)
	if err != nil {
		return err
	}
	hash, date, _ := strings.Cut(strings.TrimSpace(commit), " ")
	ownData, err := os.ReadFile(own)
	if err != nil {
		return err
	}
	table, err := price.ParseTable(ownData)
	if err != nil {
		return fmt.Errorf("%s: %w", own, err)
	}
	ids, err := readList(list)
	if err != nil {
		return err
	}
	for _, id := range ids {
		file := "providers/" + path.Dir(id) + "/models/" + path.Base(id) + ".toml"
		text, err := git(src, "show", hash+":"+file)
		if err != nil {
			return err
		}
		q, err := costOf(text)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		model := path.Base(id)
		if _, dup := table.Models[model]; dup {
			return fmt.Errorf("%s: model %q is listed twice", list, model)
		}
		table.Models[model] = price.Entry{Quote: q, Origin: "models.dev " + file}
	}
	table.Source = fmt.Sprintf("models.dev (https://github.com/anomalyco/models.dev, MIT licence) at commit %s of %s, base prices only; "+
		"models whose origin is quotagate are our own (see SOURCE.md)", hash, date)
	data := table.Encode()
	if _, err := price.ParseTable(data); err != nil { // what we write, we can read
		return err
	}
	return os.WriteFile(out, data, 0o644)
}

// readList reads provider/model lines, skipping blanks and # comments.
func readList(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			ids = append(ids, line)
		}
	}
	return ids, sc.Err()
}

// costOf reads the [cost] table of a models.dev model file: only its
// key = number lines, which is all that table holds.
func costOf(toml string) (price.Quote, error) {
	cost := map[string]string{}
	in := false
	for _, line := range strings.Split(toml, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			in = line == "[cost]"
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if in && ok {
			cost[strings.TrimSpace(key)] = strings.ReplaceAll(strings.TrimSpace(val), "_", "")
		}
	}
	if cost["input"] == "" || cost["output"] == "" {
		return price.Quote{}, fmt.Errorf("no input and output price in [cost]")
	}
	if r, ok := cost["reasoning"]; ok && r != cost["output"] {
		return price.Quote{}, fmt.Errorf("reasoning costs %s, output %s: a run prices reasoning as output", r, cost["output"])
	}
	for _, k := range []string{"cache_read", "cache_write"} {
		if cost[k] == "" {
			cost[k] = cost["input"]
		}
	}
	return price.QuoteText{Input: cost["input"], CachedInput: cost["cache_read"],
		CacheWrite: cost["cache_write"], Output: cost["output"]}.Quote()
}

func git(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}
