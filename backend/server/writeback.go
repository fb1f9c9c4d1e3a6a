package server

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/quota"
)

// WriteBack rewrites the config file the server was started with so that it
// says what is applied now (POST /admin/api/tenants/write-back). Only the
// values that differ are touched; ${ENV} references and comments elsewhere
// stay. A key is never written: a tenant whose key quotagate generated keeps
// it in the data dir (the file leaves the tenant keyless), and a rotated key
// of a tenant the file gave a key is written as its SHA-256 (key_hashes, not
// a secret) in place of the file's key, with a note saying so.
func (a tenantAdmin) WriteBack(context.Context) (admin.WriteBack, error) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	path := s.opts.ConfigPath
	if path == "" {
		return admin.WriteBack{}, ledger.Errorf(ledger.CodeInvalidRequest,
			"quotagate was started without --config (on the embedded default): there is no file to write back to; discard the changes, or start it with --config FILE").
			Because(ledger.ReasonNoConfigFile, nil)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return admin.WriteBack{}, fmt.Errorf("write back: read %s: %w", path, err)
	}
	var now []config.Tenant
	var notes []admin.WriteBackNote
	for _, t := range s.tenants {
		if t.ID == quota.DefaultTopUpTenant { // quotagate's own, never the file's
			continue
		}
		if s.keys[t.ID] != "" {
			t.KeyHashes = nil
			if !slices.ContainsFunc(s.cfg.Tenants, func(f config.Tenant) bool { return f.ID == t.ID }) {
				notes = append(notes, note(admin.NoteKeyInDataDir, t.ID, "tenant %s: written without a key; its generated key stays in the data dir (keys/%s.key) and keeps working", t.ID, t.ID))
			}
		}
		now = append(now, t)
	}
	out, more, err := RewriteTenants(data, s.cfg.Tenants, now)
	if err != nil {
		return admin.WriteBack{}, ledger.Errorf(ledger.CodeInvalidRequest, "write back to %s: %v", path, err)
	}
	c, err := sameTenants(out, now)
	if err != nil {
		return admin.WriteBack{}, fmt.Errorf("write back to %s: %w", path, err)
	}
	if err := replaceFile(path, out); err != nil {
		return admin.WriteBack{}, fmt.Errorf("write back: %w", err)
	}
	for id := range s.keys { // a tenant deleted and now gone from the file: its generated key goes too
		if !slices.ContainsFunc(now, func(t config.Tenant) bool { return t.ID == id }) && id != quota.DefaultTopUpTenant {
			delete(s.keys, id)
			if err := removeKeyFile(s.opts.DataDir, id); err != nil {
				more = append(more, note(admin.NoteKeyNotRemoved, id, "%v", err))
			}
		}
	}
	s.cfg.Tenants = c.Tenants // the file's values now: no override left
	s.hub.Publish(live.Change{Kind: live.KindConfig})
	return admin.WriteBack{File: path, Notes: append(notes, more...)}, nil
}

// sameTenants parses the rewritten file as a restart would and checks it
// gives exactly the applied policy, so a write-back never leaves a file that
// starts differently (or not at all).
func sameTenants(out []byte, now []config.Tenant) (*config.Config, error) {
	c, err := config.Parse(out, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("the rewritten file would not load: %w", err)
	}
	for _, f := range c.Tenants {
		if !slices.ContainsFunc(now, func(t config.Tenant) bool { return t.ID == f.ID }) {
			return nil, fmt.Errorf("the rewritten file still has tenant %s", f.ID)
		}
	}
	for _, t := range now {
		i := slices.IndexFunc(c.Tenants, func(f config.Tenant) bool { return f.ID == t.ID })
		if i < 0 {
			return nil, fmt.Errorf("the rewritten file lacks tenant %s", t.ID)
		}
		f := c.Tenants[i]
		if f.BudgetUnits != t.BudgetUnits || f.Budget != t.Budget || f.MaxConcurrent != t.MaxConcurrent || f.RateLimits != t.RateLimits ||
			!slices.Equal(f.AllowedModels, t.AllowedModels) {
			return nil, fmt.Errorf("the rewritten file gives tenant %s another policy", t.ID)
		}
		if len(f.KeyHashes) > 0 && !slices.Equal(f.KeyHashes, t.KeyHashes) {
			return nil, fmt.Errorf("the rewritten file gives tenant %s other keys", t.ID)
		}
	}
	return c, nil
}

// replaceFile writes data over path atomically, keeping its mode.
func replaceFile(path string, data []byte) error {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-config-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

var (
	envRefText = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	envRefMark = regexp.MustCompile(`QgEnV([A-Za-z0-9_]+?)VnEgQ`)
)

// RewriteTenants returns the config file data with the tenants of now
// written over those of file (the values the file gave): changed fields are
// set, new tenants appended. ${ENV} references are kept as written (they are
// masked while the YAML is parsed: in a flow mapping `${X}` is not a plain
// scalar). Tenants of file missing from now (deleted on the dashboard) are
// removed. notes say what became of rotated keys and removed tenants.
func RewriteTenants(data []byte, file, now []config.Tenant) ([]byte, []admin.WriteBackNote, error) {
	doc, seq, err := tenantsNode(envRefText.ReplaceAll(data, []byte("QgEnV${1}VnEgQ")))
	if err != nil {
		return nil, nil, err
	}
	var notes []admin.WriteBackNote
	for _, f := range file { // deleted on the dashboard: out of the file
		if slices.ContainsFunc(now, func(t config.Tenant) bool { return t.ID == f.ID }) {
			continue
		}
		seq.Content = slices.DeleteFunc(seq.Content, func(n *yaml.Node) bool {
			id := mapGet(n, "id")
			return id != nil && id.Value == f.ID
		})
		notes = append(notes, note(admin.NoteRemoved, f.ID, "tenant %s: removed from the file", f.ID))
	}
	for _, t := range now {
		var item *yaml.Node
		for _, n := range seq.Content {
			if id := mapGet(n, "id"); id != nil && id.Value == t.ID {
				item = n
			}
		}
		i := slices.IndexFunc(file, func(f config.Tenant) bool { return f.ID == t.ID })
		f := config.Tenant{ID: t.ID, BudgetUnits: -1} // a new tenant: every field differs
		if item == nil || i < 0 {
			item = &yaml.Node{Kind: yaml.MappingNode}
			mapSet(item, "id", str(t.ID))
			seq.Content = append(seq.Content, item)
		} else {
			f = file[i]
		}
		writePolicy(item, f, t, i < 0)
		if n, ok := writeKeyHashes(item, f, t, i < 0); ok {
			notes = append(notes, n)
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, nil, fmt.Errorf("encode YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, nil, fmt.Errorf("encode YAML: %w", err)
	}
	return envRefMark.ReplaceAll(buf.Bytes(), []byte("$${${1}}")), notes, nil
}

// tenantsNode parses the (masked) file and returns its document and its
// tenants list, added when the file has none.
func tenantsNode(masked []byte) (doc, seq *yaml.Node, err error) {
	doc = &yaml.Node{}
	if err := yaml.Unmarshal(masked, doc); err != nil {
		return nil, nil, fmt.Errorf("parse YAML: %w", err)
	}
	if doc.Kind == 0 { // an empty file
		doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("the file is not a YAML mapping")
	}
	seq = mapGet(root, "tenants")
	if seq == nil {
		seq = &yaml.Node{Kind: yaml.SequenceNode}
		mapSet(root, "tenants", seq)
	}
	if seq.Kind != yaml.SequenceNode {
		return nil, nil, fmt.Errorf("tenants is not a list")
	}
	return doc, seq, nil
}

// writePolicy sets the policy fields of t in item where they differ from
// f, the file's values (all of them for a tenant new to the file).
func writePolicy(item *yaml.Node, f, t config.Tenant, added bool) {
	if f.BudgetUnits != t.BudgetUnits {
		mapSet(item, "budget_units", num(int64(t.BudgetUnits)))
	}
	if f.Budget != t.Budget {
		if t.Budget == "" {
			mapDel(item, "budget")
		} else {
			mapSet(item, "budget", str(t.Budget)) // quoted: money is a decimal string
		}
	}
	if f.MaxConcurrent != t.MaxConcurrent {
		mapSet(item, "max_concurrent", num(int64(t.MaxConcurrent)))
	}
	if f.RateLimits != t.RateLimits {
		rl := mapGet(item, "rate_limits")
		if rl == nil || rl.Kind != yaml.MappingNode {
			rl = &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
			mapSet(item, "rate_limits", rl)
		}
		mapSet(rl, "per_minute", num(int64(t.RateLimits.PerMinute)))
		mapSet(rl, "per_hour", num(int64(t.RateLimits.PerHour)))
	}
	if !slices.Equal(f.AllowedModels, t.AllowedModels) || (added && len(t.AllowedModels) > 0) {
		if len(t.AllowedModels) == 0 {
			mapDel(item, "allowed_models")
		} else {
			list := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, m := range t.AllowedModels {
				list.Content = append(list.Content, str(m))
			}
			mapSet(item, "allowed_models", list)
		}
	}
}

// writeKeyHashes writes t's key hashes in place of the file's keys when
// they differ from f's, with the note that says what became of the key.
func writeKeyHashes(item *yaml.Node, f, t config.Tenant, added bool) (admin.WriteBackNote, bool) {
	if slices.Equal(f.KeyHashes, t.KeyHashes) {
		return admin.WriteBackNote{}, false
	}
	had := mapGet(item, "key") != nil || mapGet(item, "keys") != nil
	mapDel(item, "key")
	mapDel(item, "keys")
	hs := &yaml.Node{Kind: yaml.SequenceNode}
	for _, h := range t.KeyHashes {
		hs.Content = append(hs.Content, str(h))
	}
	mapSet(item, "key_hashes", hs)
	switch {
	case added:
		return note(admin.NoteKeyHashOnly, t.ID, "tenant %s: its key is in the file only as its SHA-256 (key_hashes); the key itself was shown once and is written nowhere", t.ID), true
	case had:
		return note(admin.NoteKeyReplaced, t.ID, "tenant %s: the file's key was replaced by the rotated key's SHA-256 (key_hashes); the old key (and any ${ENV} it came from) no longer opens quotagate", t.ID), true
	}
	return note(admin.NoteRotatedHash, t.ID, "tenant %s: the rotated key is in the file as its SHA-256 (key_hashes); the generated key in the data dir no longer applies", t.ID), true
}

func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
func num(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v, 10)}
}

func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mapSet sets key to v, keeping the old value's comments.
func mapSet(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			v.LineComment, v.HeadComment, v.FootComment = old.LineComment, old.HeadComment, old.FootComment
			if v.Kind == old.Kind && old.Style&yaml.FlowStyle != 0 {
				v.Style |= yaml.FlowStyle
			}
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, str(key), v)
}

func mapDel(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

// note is a write-back note of kind about tenant, with the server's words.
func note(kind, tenant, format string, args ...any) admin.WriteBackNote {
	return admin.WriteBackNote{Kind: kind, Tenant: tenant, Text: fmt.Sprintf(format, args...)}
}
