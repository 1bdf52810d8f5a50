//! Retention the server applies by itself: `rocklake serve --retain AGE`
//! keeps each lake's history to about AGE without anyone running `gc`.
//!
//! On a schedule the writer advances each lake's retention floor to the
//! snapshot that was current AGE ago ([`CatalogStore::retain_from`]: never
//! past a tagged snapshot, see [`crate::snapshot_tags`]) and, when the floor
//! moved, excises what no snapshot at or above it can see
//! ([`CatalogStore::excise`]), so the catalog stays bounded. A lake may set
//! its own AGE, or turn it off, with `CALL rocklake_set_retention('7d')`
//! (`'off'`; `'default'` returns to the server's): the system key
//! `retention`. Each pass is logged and counted in the metrics.

use std::time::{Duration, SystemTime};

use rocklake_codec::keys::SystemKey;

use crate::error::{StoreError, StoreResult};
use crate::retention::{ExciseReport, RetainOutcome, RetainSpec};
use crate::store::CatalogStore;

/// What a lake's retention is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LakeRetention {
    /// The server's `--retain` (none when not given).
    ServerDefault,
    /// The lake's own age.
    Age(Duration),
    /// Never given up by the server (`gc` still can).
    Off,
}

impl LakeRetention {
    /// Reads what `CALL rocklake_set_retention(...)` takes: an age such as
    /// `7d`, `off`, or `default`.
    pub fn parse(text: &str) -> StoreResult<LakeRetention> {
        match text.trim().to_ascii_lowercase().as_str() {
            "default" => Ok(LakeRetention::ServerDefault),
            "off" | "none" => Ok(LakeRetention::Off),
            other => match other.parse::<RetainSpec>() {
                Ok(RetainSpec::Age(age)) if !age.is_zero() => Ok(LakeRetention::Age(age)),
                _ => Err(StoreError::InvalidRequest(format!(
                    "invalid retention \"{text}\": expected an age (e.g. 30m, 12h, 7d), 'off' or 'default'"
                ))),
            },
        }
    }

    fn text(self) -> Option<String> {
        match self {
            LakeRetention::ServerDefault => None,
            LakeRetention::Off => Some("off".to_string()),
            LakeRetention::Age(age) => Some(format!("{}s", age.as_secs())),
        }
    }
}

/// What one retention pass did to a lake.
#[derive(Debug, Clone)]
pub struct RetentionPass {
    /// The floor before and after.
    pub outcome: RetainOutcome,
    /// What was excised, when the floor moved.
    pub excised: Option<ExciseReport>,
}

impl CatalogStore {
    /// The lake's own retention.
    pub async fn lake_retention(&self) -> StoreResult<LakeRetention> {
        let txn = self.read()?;
        let Some(bytes) = txn.view().reads().get(&SystemKey::Retention.key()).await? else {
            return Ok(LakeRetention::ServerDefault);
        };
        LakeRetention::parse(&String::from_utf8_lossy(&bytes))
    }

    /// Sets the lake's own retention.
    pub async fn set_lake_retention(&self, retention: LakeRetention) -> StoreResult<()> {
        let mut txn = self.write()?;
        match retention.text() {
            Some(text) => txn.put(&SystemKey::Retention.key(), text.as_bytes())?,
            None => txn.remove(&SystemKey::Retention.key())?,
        }
        txn.commit().await?;
        tracing::info!(?retention, location = %self.location(), "retention of the lake set");
        Ok(())
    }

    /// One pass of the schedule over this lake: with `server_default` the
    /// server's `--retain`. `None` when the lake keeps everything.
    pub async fn apply_retention(
        &self,
        server_default: Option<Duration>,
        now: SystemTime,
    ) -> StoreResult<Option<RetentionPass>> {
        let age = match self.lake_retention().await? {
            LakeRetention::Off => return Ok(None),
            LakeRetention::Age(age) => age,
            LakeRetention::ServerDefault => match server_default {
                Some(age) => age,
                None => return Ok(None),
            },
        };
        let outcome = match self.retain_from(RetainSpec::Age(age), now).await {
            Ok(outcome) => outcome,
            // A lake without snapshots yet has nothing to give up.
            Err(StoreError::InvalidRequest(_)) => return Ok(None),
            Err(error) => return Err(error),
        };
        let excised = if outcome.floor > outcome.previous {
            Some(self.excise(now).await?)
        } else {
            None
        };
        rocklake_metrics::metrics().retention_pass(excised.as_ref().map_or(0, ExciseReport::rows));
        Ok(Some(RetentionPass { outcome, excised }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_reads_ages_off_and_default() {
        assert_eq!(
            LakeRetention::parse("7d").unwrap(),
            LakeRetention::Age(Duration::from_secs(7 * 86_400))
        );
        assert_eq!(LakeRetention::parse("OFF").unwrap(), LakeRetention::Off);
        assert_eq!(
            LakeRetention::parse("default").unwrap(),
            LakeRetention::ServerDefault
        );
        assert!(
            LakeRetention::parse("42").is_err(),
            "a snapshot id is no age"
        );
        assert!(LakeRetention::parse("0s").is_err());
        let stored = LakeRetention::Age(Duration::from_secs(90)).text().unwrap();
        assert_eq!(
            LakeRetention::parse(&stored).unwrap(),
            LakeRetention::Age(Duration::from_secs(90))
        );
    }
}
