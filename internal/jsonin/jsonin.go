// Package jsonin checks JSON from outside (an API body, an MCP tool's
// arguments) for what encoding/json lets through silently: invalid UTF-8,
// which it turns into U+FFFD, and a key given twice, where the last wins
// and keys match without regard to case ("GOAL" overrides "goal").
package jsonin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Errors of Check.
var (
	ErrInvalidUTF8 = errors.New("the JSON text is not valid UTF-8")
	ErrTooDeep     = fmt.Errorf("the JSON nests deeper than %d", MaxDepth)
)

// MaxDepth bounds how deep objects and arrays nest (encoding/json's own
// limit is 10000).
const MaxDepth = 100

// DuplicateKeyError is an object that names a key twice (compared as
// encoding/json matches keys to fields: without regard to case).
type DuplicateKeyError struct {
	Key, Earlier string // the second spelling, and the first
	Path         string // where the object is ("" at the top, else like "params")
}

func (e *DuplicateKeyError) Error() string {
	where := ""
	if e.Path != "" {
		where = " in " + e.Path
	}
	if e.Key == e.Earlier {
		return fmt.Sprintf("the key %q is given twice%s", e.Key, where)
	}
	return fmt.Sprintf("the key %q is given twice%s (as %q and %q, which name the same field)", e.Key, where, e.Earlier, e.Key)
}

// Check returns ErrInvalidUTF8 or a *DuplicateKeyError for data, or nil.
// Syntax errors are left to the decoder that follows (nil here).
func Check(data []byte) error {
	if !utf8.Valid(data) {
		return ErrInvalidUTF8
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	err := value(dec, "", 0)
	var dup *DuplicateKeyError
	if errors.As(err, &dup) || errors.Is(err, ErrTooDeep) {
		return err
	}
	return nil
}

// fold is the key a field name matches under: encoding/json folds case
// (including the Kelvin sign and the long s, which fold to k and s).
func fold(k string) string { return strings.ToLower(strings.ToUpper(k)) }

// value reads one JSON value from dec, checking every object in it.
func value(dec *json.Decoder, path string, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth++; depth > MaxDepth {
		return ErrTooDeep
	}
	switch d {
	case '{':
		seen := map[string]string{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := tok.(string)
			if first, ok := seen[fold(k)]; ok {
				return &DuplicateKeyError{Key: k, Earlier: first, Path: path}
			}
			seen[fold(k)] = k
			if err := value(dec, join(path, k), depth); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := value(dec, fmt.Sprintf("%s[%d]", path, i), depth); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
