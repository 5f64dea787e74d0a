// Compiles regular expressions with Go's regexp (RE2 syntax, what kin-openapi and Go
// validators use) and matches each against sample strings; run by
// test/spec/patterns-re2.ts with `go run` (standard library only, no module).
//
// stdin:  [{"pattern": "...", "samples": ["...", ...]}, ...]
// stdout: [{"error": "" or the compile error, "matches": [true, false, ...]}, ...]
package main

import (
	"encoding/json"
	"os"
	"regexp"
)

type probe struct {
	Pattern string   `json:"pattern"`
	Samples []string `json:"samples"`
}

type result struct {
	Error   string `json:"error"`
	Matches []bool `json:"matches"`
}

func main() {
	var probes []probe
	if err := json.NewDecoder(os.Stdin).Decode(&probes); err != nil {
		os.Stderr.WriteString("bad input: " + err.Error() + "\n")
		os.Exit(2)
	}
	results := make([]result, len(probes))
	for i, p := range probes {
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			results[i] = result{Error: err.Error(), Matches: []bool{}}
			continue
		}
		matches := make([]bool, len(p.Samples))
		for j, s := range p.Samples {
			matches[j] = re.MatchString(s)
		}
		results[i] = result{Matches: matches}
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		os.Exit(2)
	}
}
