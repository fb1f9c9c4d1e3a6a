package wire

// maxDepth is encoding/json's nesting limit: json.Valid refuses deeper
// input, and so does Valid.
const maxDepth = 10000

// Valid reports whether data is one valid JSON value, exactly as
// json.Valid does (FuzzValid holds the two together), in one pass that
// skips over string contents without a per-byte state machine (json.Valid
// was a quarter of the parse of a 600 KB conversation). Like json.Valid it
// does not check UTF-8.
func Valid(data []byte) bool {
	v := validator{data: data}
	i, ok := v.value(v.space(0), 0)
	return ok && v.space(i) == len(data)
}

type validator struct{ data []byte }

func (v *validator) space(i int) int {
	for i < len(v.data) {
		switch v.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value checks the value at data[i] and returns the index after it.
func (v *validator) value(i, depth int) (int, bool) {
	d := v.data
	if i >= len(d) {
		return i, false
	}
	switch c := d[i]; {
	case c == '"':
		return v.str(i)
	case c == '{' || c == '[':
		return v.container(i, depth+1)
	case c == '-' || ('0' <= c && c <= '9'):
		return v.number(i)
	case c == 't':
		return v.literal(i, "true")
	case c == 'f':
		return v.literal(i, "false")
	case c == 'n':
		return v.literal(i, "null")
	}
	return i, false
}

// container checks the object or array at data[i] (its '{' or '[') at
// nesting depth: members (a key, a colon, a value) or elements (a value),
// separated by commas.
func (v *validator) container(i, depth int) (int, bool) {
	d := v.data
	closing := byte(']')
	if d[i] == '{' {
		closing = '}'
	}
	if depth > maxDepth {
		return i, false
	}
	i = v.space(i + 1)
	if i < len(d) && d[i] == closing {
		return i + 1, true
	}
	for {
		var ok bool
		if closing == '}' {
			if i >= len(d) || d[i] != '"' {
				return i, false
			}
			if i, ok = v.str(i); !ok {
				return i, false
			}
			if i = v.space(i); i >= len(d) || d[i] != ':' {
				return i, false
			}
			i = v.space(i + 1)
		}
		if i, ok = v.value(i, depth); !ok {
			return i, false
		}
		if i = v.space(i); i >= len(d) {
			return i, false
		}
		switch d[i] {
		case ',':
			i = v.space(i + 1)
		case closing:
			return i + 1, true
		default:
			return i, false
		}
	}
}

func (v *validator) literal(i int, lit string) (int, bool) {
	if len(v.data)-i < len(lit) || string(v.data[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// str checks the string literal at data[i] (a quote).
func (v *validator) str(i int) (int, bool) {
	d := v.data
	for i++; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(d) {
				return i, false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(d)-i < 5 {
					return i, false
				}
				for _, h := range d[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (v *validator) number(i int) (int, bool) {
	d := v.data
	digits := func(i int) (int, bool) {
		j := i
		for j < len(d) && '0' <= d[j] && d[j] <= '9' {
			j++
		}
		return j, j > i
	}
	if d[i] == '-' {
		i++
	}
	if i >= len(d) {
		return i, false
	}
	var ok bool
	if d[i] == '0' {
		i++
	} else if i, ok = digits(i); !ok {
		return i, false
	}
	if i < len(d) && d[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return i, false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return i, false
		}
	}
	return i, true
}
