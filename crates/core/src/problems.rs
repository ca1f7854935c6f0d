//! What a validation found: every problem with its field path.

use std::fmt;

/// One problem: where (`config.sizes.fontSize`) and which rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// The field's path, dot-separated with `[i]` for list items (`words[3].end`).
    pub path: String,
    /// The rule broken, in words (`must be an integer from 0 to 255`).
    pub rule: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.rule)
    }
}

/// Every problem found in one input, in document order.
#[derive(Debug, Clone, PartialEq, Eq, Default, thiserror::Error)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl ValidationErrors {
    /// One problem at `path`.
    pub fn one(path: impl Into<String>, rule: impl Into<String>) -> Self {
        Self(vec![ValidationError {
            path: path.into(),
            rule: rule.into(),
        }])
    }

    /// Adds a problem at `path`.
    pub fn push(&mut self, path: impl Into<String>, rule: impl Into<String>) {
        self.0.push(ValidationError {
            path: path.into(),
            rule: rule.into(),
        });
    }

    /// No problem found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many problems.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The problems in document order.
    pub fn iter(&self) -> std::slice::Iter<'_, ValidationError> {
        self.0.iter()
    }

    /// Prefixes every path, e.g. with a file name.
    pub fn within(mut self, prefix: &str) -> Self {
        for e in &mut self.0 {
            e.path = if e.path.is_empty() {
                prefix.to_owned()
            } else {
                format!("{prefix}.{}", e.path)
            };
        }
        self
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl<'a> IntoIterator for &'a ValidationErrors {
    type Item = &'a ValidationError;
    type IntoIter = std::slice::Iter<'a, ValidationError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
