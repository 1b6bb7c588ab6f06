//! Parsing and validation of a workload's `name=value` parameters.
//!
//! Every value comes in as text (from the CLI, TOML or Python); unset parameters take the
//! default text of their [`ParamInfo`], parsed the same way, so the listing and the
//! behaviour cannot drift apart. Errors are [`Error::Invalid`] with `what` =
//! `workload NAME` and a message naming the parameter and what was expected.

use super::ParamInfo;
use crate::{Error, Result};

/// The parameters given to one workload, checked against its [`ParamInfo`] list.
pub(crate) struct Params<'a> {
    workload: &'static str,
    info: &'static [ParamInfo],
    given: Vec<(&'a str, &'a str)>,
}

impl<'a> Params<'a> {
    /// Rejects unknown and repeated parameter names.
    pub fn new(workload: &'static str, info: &'static [ParamInfo], params: &'a [(String, String)]) -> Result<Self> {
        let mut given: Vec<(&str, &str)> = Vec::with_capacity(params.len());
        for (name, value) in params {
            let name = name.trim();
            if !info.iter().any(|p| p.name == name) {
                let expected: Vec<&str> = info.iter().map(|p| p.name).collect();
                return Err(Error::invalid(
                    format!("workload {workload}"),
                    format!("unknown parameter '{name}' (expected: {})", expected.join(", ")),
                ));
            }
            if given.iter().any(|(n, _)| *n == name) {
                return Err(Error::invalid(format!("workload {workload}"), format!("parameter '{name}' given twice")));
            }
            given.push((name, value.as_str()));
        }
        Ok(Params { workload, info, given })
    }

    /// `workload NAME`, the subject of this workload's error messages.
    pub fn what(&self) -> String {
        format!("workload {}", self.workload)
    }

    /// An error about this workload.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::invalid(self.what(), message)
    }

    /// The value given for `name`, if any (no default).
    pub fn given(&self, name: &str) -> Option<&'a str> {
        debug_assert!(self.info.iter().any(|p| p.name == name), "undeclared parameter {name}");
        self.given.iter().find(|(n, _)| *n == name).map(|(_, v)| v.trim())
    }

    /// The value given for `name`, else its declared default.
    fn text(&self, name: &str) -> &'a str {
        if let Some(v) = self.given(name) {
            return v;
        }
        self.info
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.default)
            .unwrap_or_else(|| panic!("workload {}: undeclared parameter {name}", self.workload))
    }

    fn bad(&self, name: &str, expected: &str, got: &str) -> Error {
        self.error(format!("parameter '{name}': expected {expected}, got '{got}'"))
    }

    /// A whole number in `min..=max`.
    pub fn count(&self, name: &str, min: u64, max: u64) -> Result<u64> {
        let text = self.text(name);
        let expected = if max == u64::MAX {
            if min == 1 {
                "a positive whole number".to_string()
            } else {
                format!("a whole number >= {min}")
            }
        } else {
            format!("a whole number from {min} to {max}")
        };
        match parse_whole(text) {
            Some(v) if v >= min && v <= max => Ok(v),
            _ => Err(self.bad(name, &expected, text)),
        }
    }

    /// A real number in `min..=max` (both finite).
    pub fn real(&self, name: &str, min: f64, max: f64) -> Result<f64> {
        let text = self.text(name);
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= min && v <= max => Ok(v),
            _ => Err(self.bad(name, &format!("a number from {min} to {max}"), text)),
        }
    }

    /// A real number strictly greater than `min` (and finite).
    pub fn real_above(&self, name: &str, min: f64) -> Result<f64> {
        let text = self.text(name);
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() && v > min => Ok(v),
            _ => Err(self.bad(name, &format!("a number > {min}"), text)),
        }
    }

    /// true/false (also yes/no, on/off, 1/0).
    pub fn flag(&self, name: &str) -> Result<bool> {
        let text = self.text(name);
        match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Ok(true),
            "false" | "no" | "off" | "0" => Ok(false),
            _ => Err(self.bad(name, "true or false", text)),
        }
    }

    /// A comma-separated list of at least one item, each (trimmed) parsed by `item`;
    /// `expected` says what an item is, for the error.
    pub fn list<T>(&self, name: &str, expected: &str, item: impl Fn(&str) -> Option<T>) -> Result<Vec<T>> {
        let text = self.text(name);
        match text.split(',').map(|s| item(s.trim())).collect::<Option<Vec<T>>>() {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(self.bad(name, &format!("{expected}, comma-separated"), text)),
        }
    }

    /// One of `options` (case-insensitive); returns the option as declared.
    pub fn choice(&self, name: &str, options: &[&'static str]) -> Result<&'static str> {
        let text = self.text(name);
        options
            .iter()
            .find(|o| o.eq_ignore_ascii_case(text))
            .copied()
            .ok_or_else(|| self.bad(name, &format!("one of {}", options.join(", ")), text))
    }
}

/// A non-negative whole number in decimal: `1000`, `1_000_000`, or an exact float
/// spelling such as `1e6` or `2000.0`.
pub(crate) fn parse_whole(text: &str) -> Option<u64> {
    let t: String = text.trim().chars().filter(|&c| c != '_').collect();
    if t.is_empty() {
        return None;
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().ok();
    }
    let v: f64 = t.parse().ok()?;
    // Exact whole values only, up to 2^53 (every integer below is representable).
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_992.0 {
        Some(v as u64)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::parse_whole;

    #[test]
    fn workload_whole_numbers() {
        assert_eq!(parse_whole("1000"), Some(1000));
        assert_eq!(parse_whole(" 1_000_000 "), Some(1_000_000));
        assert_eq!(parse_whole("1e6"), Some(1_000_000));
        assert_eq!(parse_whole("2000.0"), Some(2000));
        assert_eq!(parse_whole("2.5"), None);
        assert_eq!(parse_whole("-3"), None);
        assert_eq!(parse_whole("lots"), None);
        assert_eq!(parse_whole(""), None);
        assert_eq!(parse_whole("99999999999999999999999"), None);
    }
}
