package config_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
)

func TestKeyPoolRefused(t *testing.T) {
	up := "upstreams:\n  - {name: x, base_url: 'http://h', models: [m], "
	for _, tt := range []struct{ name, yaml, want string }{
		{"Both", up + "api_key: sk-one-key, api_keys: [sk-two-key]}\n", "upstream x: give api_key or api_keys, not both"},
		{"EmptyPool", up + "api_keys: []}\n", "upstream x: api_keys is empty"},
		{"EmptyKey", up + "api_keys: [sk-one-key, '']}\n", "upstream x: api_keys[1] is empty"},
		{"EmptyEnvKey", up + "api_keys: [sk-one-key, ${EMPTY}]}\n", "upstream x: api_keys[1] is empty"},
		{"RepeatedKey", up + "api_keys: [sk-one-key, sk-two-key, sk-one-key]}\n", "upstream x: api_keys[2] repeats api_keys[0]"},
		{"CooldownWithoutPool", up + "api_key: sk-one-key, key_cooldown: 5m}\n", "key_cooldown rests the keys of a pool; it needs api_keys"},
		{"CooldownNotADuration", up + "api_keys: [sk-one-key], key_cooldown: soon}\n", "parse YAML"},
		{"CooldownBareNumber", up + "api_keys: [sk-one-key], key_cooldown: 10}\n", "cannot unmarshal"},
		{"CooldownNegative", up + "api_keys: [sk-one-key], key_cooldown: -1m}\n", "key_cooldown -1m0s"},
		{"CooldownTooLong", up + "api_keys: [sk-one-key], key_cooldown: 48h}\n", "key_cooldown 48h0m0s"},
		{"CooldownFraction", up + "api_keys: [sk-one-key], key_cooldown: 1.5}\n", "whole numbers"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse([]byte(tt.yaml), env(map[string]string{"EMPTY": ""}))
			if err == nil {
				t.Fatalf("Parse accepted %q: %+v", tt.yaml, c)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestKeyPoolFromEnv(t *testing.T) {
	yaml := "upstreams:\n  - name: x\n    base_url: 'http://h'\n    models: [m]\n    api_keys: [${K1}, ${K2}, sk-plain-key]\n    key_cooldown: 90s\n"
	c, err := config.Parse([]byte(yaml), env(map[string]string{"K1": "sk-one, [two]", "K2": "sk-two#x"}))
	if err != nil {
		t.Fatal(err)
	}
	u := c.Upstreams[0]
	if want := []string{"sk-one, [two]", "sk-two#x", "sk-plain-key"}; !slices.Equal(u.APIKeys, want) || u.KeyCooldown != 90*time.Second {
		t.Errorf("api_keys %q key_cooldown %s, want %q and 1m30s", u.APIKeys, u.KeyCooldown, want)
	}
}
