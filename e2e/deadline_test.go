package e2e

import "time"

// platformDeadline bounds every wait in these tests, which start several
// targets in one process: a safety net against a hang on a busy 2-core
// machine, never a measure of speed. Passing tests return as soon as the
// condition holds; speed is measured in bench/ and BENCHMARKS.md.
const platformDeadline = 2 * time.Minute
