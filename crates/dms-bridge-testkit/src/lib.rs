//! Mock dealership upstreams on loopback, for the bridge's demo, tests,
//! examples and benchmarks.
