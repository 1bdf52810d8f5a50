//! Where a catalog lives: a local directory (the default) or an S3 prefix.

use std::path::PathBuf;
use std::sync::Arc;

use slatedb::object_store::aws::AmazonS3Builder;
use slatedb::object_store::local::LocalFileSystem;
use slatedb::object_store::ObjectStore;

use crate::error::{StoreError, StoreResult};

/// A catalog location as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A local directory; created if missing. Writes are fsynced.
    Local(PathBuf),
    /// `s3://bucket/prefix`. Endpoint, region and credentials come from the
    /// standard `AWS_*` environment variables (`AWS_ENDPOINT_URL`,
    /// `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_ALLOW_HTTP`).
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
    pub fn open_object_store(&self) -> StoreResult<(Arc<dyn ObjectStore>, String)> {
        match self {
            StoreLocation::Local(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| StoreError::Location {
                    location: dir.display().to_string(),
                    reason: format!("cannot create directory: {e}"),
                })?;
                let store = LocalFileSystem::new_with_prefix(dir)
                    .map_err(|e| StoreError::Location {
                        location: dir.display().to_string(),
                        reason: e.to_string(),
                    })?
                    .with_fsync(true);
                Ok((Arc::new(store), "catalog".to_string()))
            }
            StoreLocation::S3 { bucket, prefix } => {
                let store = AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .build()
                    .map_err(|e| StoreError::Location {
                        location: format!("s3://{bucket}/{prefix}"),
                        reason: e.to_string(),
                    })?;
                let path = if prefix.is_empty() {
                    "catalog".to_string()
                } else {
                    format!("{prefix}/catalog")
                };
                Ok((Arc::new(store), path))
            }
        }
    }
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
}
