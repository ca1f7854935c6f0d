//! Placeholder replaced by the blend bench below.
fn main() {}
