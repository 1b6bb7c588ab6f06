//! The `key=value` parameters of a policy name (`lirs:hir=1,hir_min=2`): parsing into
//! typed values, with one-line errors that name the policy and the parameter.

use crate::{Error, Result};

/// The `key=value` pairs after `name:`, checked against the keys the policy knows.
pub struct ParamList<'a> {
    /// The whole policy text, for messages.
    text: &'a str,
    policy: &'static str,
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> ParamList<'a> {
    /// Splits `params` (`k=v,k=v`) of `policy`; every key must be one of `known`, and
    /// given once.
    pub fn parse(text: &'a str, policy: &'static str, params: &'a str, known: &[&str]) -> Result<Self> {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for item in params.split(',') {
            let item = item.trim();
            let Some((key, value)) = item.split_once('=') else {
                return Err(Self::error(text, format!("expected {policy} parameters as name=value (one of: {}), got '{item}'", known.join(", "))));
            };
            let key = key.trim();
            if !known.contains(&key) {
                return Err(Self::error(text, format!("{policy} has no parameter '{key}' (it has: {})", known.join(", "))));
            }
            if pairs.iter().any(|(k, _)| *k == key) {
                return Err(Self::error(text, format!("{policy} parameter {key} given twice")));
            }
            pairs.push((key, value.trim()));
        }
        Ok(ParamList { text, policy, pairs })
    }

    fn error(text: &str, message: String) -> Error {
        Error::invalid("policy", format!("'{text}': {message}"))
    }

    fn bad(&self, key: &str, expected: &str, got: &str) -> Error {
        Self::error(self.text, format!("{} parameter {key}: expected {expected}, got '{got}'", self.policy))
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// A real number in `[min, max)` (`max_open`) or `[min, max]`.
    pub fn real(&self, key: &str, default: f64, min: f64, max: f64, max_open: bool, expected: &str) -> Result<f64> {
        let Some(v) = self.get(key) else { return Ok(default) };
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= min && (if max_open { x < max } else { x <= max }) => Ok(x),
            _ => Err(self.bad(key, expected, v)),
        }
    }

    /// A real number of at least `min`, or `none` (no bound).
    pub fn bound(&self, key: &str, default: Option<f64>, min: f64, expected: &str) -> Result<Option<f64>> {
        let Some(v) = self.get(key) else { return Ok(default) };
        if v == "none" {
            return Ok(None);
        }
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= min => Ok(Some(x)),
            _ => Err(self.bad(key, expected, v)),
        }
    }

    /// A whole number in `[min, max]`.
    pub fn whole(&self, key: &str, default: u32, min: u32, max: u32, expected: &str) -> Result<u32> {
        let Some(v) = self.get(key) else { return Ok(default) };
        match v.parse::<u32>() {
            Ok(x) if x >= min && x <= max => Ok(x),
            _ => Err(self.bad(key, expected, v)),
        }
    }

    /// One of two words: `yes`/`no` style switches (`on`, `off`, `1`, `0` also).
    pub fn switch(&self, key: &str, default: bool, (on, off): (&str, &str)) -> Result<bool> {
        let Some(v) = self.get(key) else { return Ok(default) };
        if v == on {
            Ok(true)
        } else if v == off {
            Ok(false)
        } else {
            Err(self.bad(key, &format!("{on} or {off}"), v))
        }
    }
}

/// A bound for a label: `none` or the number.
pub fn bound_text(b: Option<f64>) -> String {
    b.map_or_else(|| "none".to_string(), |x| x.to_string())
}
