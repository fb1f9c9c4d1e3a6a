package config

import (
	"fmt"
	"slices"
	"time"
)

// maxKeyCooldown bounds key_cooldown: a refused key is back within a day.
const maxKeyCooldown = 24 * time.Hour

// validateKeys checks an upstream's key or key pool: one of api_key and
// api_keys, a pool with at least one key and no empty or repeated one, and
// a key_cooldown only beside a pool.
func (u *Upstream) validateKeys(where string) error {
	if u.APIKeys == nil {
		if u.KeyCooldown != 0 {
			return fmt.Errorf("%s: key_cooldown rests the keys of a pool; it needs api_keys", where)
		}
		return nil
	}
	if u.APIKey != "" {
		return fmt.Errorf("%s: give api_key or api_keys, not both", where)
	}
	if len(u.APIKeys) == 0 {
		return fmt.Errorf("%s: api_keys is empty; list at least one key, or give api_key", where)
	}
	for i, k := range u.APIKeys {
		if k == "" {
			return fmt.Errorf("%s: api_keys[%d] is empty (an unset ${ENV}?)", where, i)
		}
		if slices.Index(u.APIKeys, k) != i {
			return fmt.Errorf("%s: api_keys[%d] repeats api_keys[%d]", where, i, slices.Index(u.APIKeys, k))
		}
	}
	if u.KeyCooldown != 0 && (underSecond(u.KeyCooldown) || u.KeyCooldown < 0 || u.KeyCooldown > maxKeyCooldown) {
		return fmt.Errorf("%s: key_cooldown %s: write a duration from 1s to 24h (default 10m)", where, u.KeyCooldown)
	}
	return nil
}
