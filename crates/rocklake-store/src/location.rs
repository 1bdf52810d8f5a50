//! Where a catalog lives: a local directory (the default) or an S3 prefix.

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use slatedb::object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use slatedb::object_store::local::LocalFileSystem;
use slatedb::object_store::path::Path as ObjectPath;
use slatedb::object_store::{ClientConfigKey, ObjectStore, RetryConfig};

use crate::error::{StoreError, StoreResult};

/// A catalog location as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A local directory; created if missing. Writes are fsynced.
    Local(PathBuf),
    /// `s3://bucket/prefix`. Endpoint, region and credentials come from the
    /// standard `AWS_*` environment variables (`AWS_ENDPOINT_URL`,
    /// `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_ALLOW_HTTP`). A plain-HTTP endpoint is accepted without
    /// `AWS_ALLOW_HTTP` when it is a loopback address (a local S3 emulator).
    /// Writer fencing relies on conditional PUT (`If-None-Match` / `If-Match`,
    /// object_store's default `AWS_CONDITIONAL_PUT=etag`), which S3 and the
    /// usual emulators support.
    S3 {
        /// Bucket name.
        bucket: String,
        /// Key prefix inside the bucket, without leading or trailing `/`.
        prefix: String,
    },
}

impl StoreLocation {
    /// Parses `s3://bucket/prefix` or a local path.
    pub fn parse(text: &str) -> StoreResult<StoreLocation> {
        if let Some(rest) = text.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(StoreError::Location {
                    location: text.to_string(),
                    reason: "missing bucket name".to_string(),
                });
            }
            return Ok(StoreLocation::S3 {
                bucket: bucket.to_string(),
                prefix: prefix.trim_matches('/').to_string(),
            });
        }
        if text.contains("://") {
            return Err(StoreLocation::unsupported(text));
        }
        Ok(StoreLocation::Local(PathBuf::from(text)))
    }

    fn unsupported(text: &str) -> StoreError {
        StoreError::Location {
            location: text.to_string(),
            reason: "only local directories and s3:// are supported".to_string(),
        }
    }

    /// The object store and the path of the SlateDB database inside it.
    pub fn open_object_store(&self) -> StoreResult<(Arc<dyn ObjectStore>, ObjectPath)> {
        match self {
            StoreLocation::Local(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| StoreError::Location {
                    location: dir.display().to_string(),
                    reason: format!("cannot create directory: {e}"),
                })?;
                // One store for the whole file system, with absolute paths:
                // a clone's manifest names its parent's catalog by path,
                // which must resolve in the clone's store too.
                let store = LocalFileSystem::new().with_fsync(true);
                let base = Self::local_base(dir)?;
                Ok((Arc::new(store), base.join("catalog")))
            }
            StoreLocation::S3 { bucket, prefix } => {
                let store = self
                    .s3_builder(bucket)?
                    .build()
                    .map_err(|e| self.s3_error(e.to_string()))?;
                Ok((
                    Arc::new(store),
                    ObjectPath::from(Self::catalog_path(prefix)),
                ))
            }
        }
    }

    /// The directory of the commit journal of a catalog in a local
    /// directory (see [`crate::journal`]); `None` on S3.
    pub fn journal_directory(&self) -> Option<PathBuf> {
        match self {
            StoreLocation::Local(dir) => Some(dir.join("journal")),
            StoreLocation::S3 { .. } => None,
        }
    }

    /// The object path of local directory `dir` (which exists).
    fn local_base(dir: &std::path::Path) -> StoreResult<ObjectPath> {
        let error = |reason: String| StoreError::Location {
            location: dir.display().to_string(),
            reason,
        };
        let absolute = std::fs::canonicalize(dir).map_err(|e| error(e.to_string()))?;
        ObjectPath::from_absolute_path(&absolute).map_err(|e| error(e.to_string()))
    }

    /// Whether `other` is on the same object store (both local, or both in
    /// the same bucket): what a clone and its parent must share.
    pub fn same_store(&self, other: &StoreLocation) -> bool {
        match (self, other) {
            (StoreLocation::Local(_), StoreLocation::Local(_)) => true,
            (StoreLocation::S3 { bucket: a, .. }, StoreLocation::S3 { bucket: b, .. }) => a == b,
            _ => false,
        }
    }

    /// The location of folder `segment` inside this one (a sub-directory,
    /// or a longer S3 prefix).
    pub fn child(&self, segment: &str) -> StoreLocation {
        match self {
            StoreLocation::Local(dir) => StoreLocation::Local(dir.join(segment)),
            StoreLocation::S3 { bucket, prefix } => StoreLocation::S3 {
                bucket: bucket.clone(),
                prefix: if prefix.is_empty() {
                    segment.to_string()
                } else {
                    format!("{prefix}/{segment}")
                },
            },
        }
    }

    /// The object store holding this location and the location's own path
    /// in it (empty for a local directory, the prefix on S3): for working
    /// with the folders under it (see [`crate::root`]).
    pub fn root_object_store(&self) -> StoreResult<(Arc<dyn ObjectStore>, ObjectPath)> {
        let (store, catalog) = self.open_object_store()?;
        let base = match self {
            StoreLocation::Local(dir) => Self::local_base(dir)?,
            StoreLocation::S3 { .. } => {
                let parts: Vec<_> = catalog.parts().collect();
                ObjectPath::from_iter(parts[..parts.len() - 1].iter().cloned())
            }
        };
        Ok((store, base))
    }

    /// Checks that the location can be reached before it is opened, so that a
    /// wrong endpoint, a missing bucket or bad credentials give one clear error
    /// at once instead of a silent hang while SlateDB retries. A local
    /// directory is always reachable (it is created on open).
    pub async fn check_reachable(&self) -> StoreResult<()> {
        let StoreLocation::S3 { bucket, prefix } = self else {
            return Ok(());
        };
        let builder = self.s3_builder(bucket)?;
        let endpoint = builder
            .get_config_value(&AmazonS3ConfigKey::Endpoint)
            .unwrap_or_else(|| "the default AWS endpoint".to_string());
        let probe = builder
            .with_retry(RetryConfig {
                max_retries: 1,
                retry_timeout: Duration::from_secs(10),
                ..RetryConfig::default()
            })
            .build()
            .map_err(|e| self.s3_error(e.to_string()))?;
        let path = ObjectPath::from(Self::catalog_path(prefix));
        probe
            .list_with_delimiter(Some(&path))
            .await
            .map_err(|e| self.s3_error(format!("cannot list the bucket at {endpoint}: {e}")))?;
        Ok(())
    }

    /// Whether a catalog exists here: SlateDB has written a manifest.
    pub async fn holds_catalog(&self) -> StoreResult<bool> {
        use futures::TryStreamExt;
        let (store, path) = self.open_object_store()?;
        let manifests = path.join("manifest");
        match store.list(Some(&manifests)).try_next().await {
            Ok(first) => Ok(first.is_some()),
            Err(slatedb::object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(StoreError::Location {
                location: self.to_string(),
                reason: format!("cannot list the catalog's manifests: {e}"),
            }),
        }
    }

    /// The bytes of every object of the catalog (WAL, compacted tables,
    /// manifests): what the catalog takes in its directory or bucket.
    pub async fn stored_bytes(&self) -> StoreResult<u64> {
        use futures::TryStreamExt;
        let (store, path) = self.open_object_store()?;
        store
            .list(Some(&path))
            .try_fold(0u64, |total, meta| async move { Ok(total + meta.size) })
            .await
            .map_err(|e| StoreError::Location {
                location: self.to_string(),
                reason: format!("cannot list the catalog's objects: {e}"),
            })
    }

    /// The SlateDB database path inside the bucket.
    fn catalog_path(prefix: &str) -> String {
        if prefix.is_empty() {
            "catalog".to_string()
        } else {
            format!("{prefix}/catalog")
        }
    }

    fn s3_error(&self, reason: String) -> StoreError {
        StoreError::Location {
            location: self.to_string(),
            reason,
        }
    }

    /// The S3 client settings: the `AWS_*` environment, the bucket, and plain
    /// HTTP allowed for a loopback endpoint.
    fn s3_builder(&self, bucket: &str) -> StoreResult<AmazonS3Builder> {
        let builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        let allow_http = builder
            .get_config_value(&AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp))
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        match builder.get_config_value(&AmazonS3ConfigKey::Endpoint) {
            Some(endpoint) if !allow_http && endpoint.starts_with("http://") => {
                if is_loopback_http(&endpoint) {
                    Ok(builder.with_allow_http(true))
                } else {
                    Err(self.s3_error(format!(
                        "endpoint {endpoint} is plain HTTP: use https, or set AWS_ALLOW_HTTP=true"
                    )))
                }
            }
            _ => Ok(builder),
        }
    }
}

/// True for `http://` URLs whose host is a loopback address or `localhost`.
fn is_loopback_http(endpoint: &str) -> bool {
    let Some(rest) = endpoint.strip_prefix("http://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        bracketed.split_once(']').map_or("", |(h, _)| h)
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl std::fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreLocation::Local(dir) => write!(f, "{}", dir.display()),
            StoreLocation::S3 { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_locations() {
        assert_eq!(
            StoreLocation::parse("./lake").unwrap(),
            StoreLocation::Local(PathBuf::from("./lake"))
        );
        assert_eq!(
            StoreLocation::parse("s3://bucket/a/b/").unwrap(),
            StoreLocation::S3 {
                bucket: "bucket".into(),
                prefix: "a/b".into()
            }
        );
        assert!(StoreLocation::parse("s3:///x").is_err());
        assert!(StoreLocation::parse("gs://x").is_err());
    }

    /// Regression: a local S3 emulator on `http://127.0.0.1:PORT` was refused
    /// unless `AWS_ALLOW_HTTP=true` was also set.
    #[test]
    fn loopback_http_endpoints() {
        for url in [
            "http://127.0.0.1:9000",
            "http://127.0.0.1:9000/",
            "http://localhost:9000",
            "http://LOCALHOST",
            "http://[::1]:9000",
            "http://127.1.2.3",
        ] {
            assert!(is_loopback_http(url), "{url}");
        }
        for url in [
            "https://127.0.0.1:9000",
            "http://10.0.0.1:9000",
            "http://s3.example.com",
            "http://127.0.0.1.example.com",
            "http://[::2]:9000",
            "127.0.0.1:9000",
        ] {
            assert!(!is_loopback_http(url), "{url}");
        }
    }
}
