package config_test

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/config"
)

// TestEveryKeyDocumented: each key the config file takes is written out
// (`key:`) in docs/configuration.md, the file's reference.
func TestEveryKeyDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	yamlKeys(reflect.TypeFor[config.Config](), keys, map[reflect.Type]bool{})
	if len(keys) < 50 {
		t.Fatalf("only %d keys found in config.Config: %v", len(keys), keys)
	}
	for k := range keys {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(k) + `:`).Match(doc) {
			t.Errorf("the config key %s is not in docs/configuration.md", k)
		}
	}
}

// yamlKeys adds the yaml keys of t's fields, and of the structs they hold,
// to keys.
func yamlKeys(t reflect.Type, keys map[string]bool, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			keys[name] = true
		}
		yamlKeys(f.Type, keys, seen)
	}
}
