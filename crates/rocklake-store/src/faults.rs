//! Storage faults: a full disk, an I/O error, an object store that does not
//! answer. SlateDB retries a failed object store request without end (so a
//! catalog recovers by itself once the fault clears) and tells nobody; the
//! catalog learns of the fault from [`WatchedObjectStore`], which sits
//! between SlateDB and the object store and records the last failure of a
//! write or a read until a request of the same kind succeeds again.
//!
//! What a fault means for a statement is decided where the statement waits
//! (commits: see `txn/commit.rs`): a wait for storage is bounded by the
//! store's storage timeout, and a statement that gives up says what the
//! storage reported, classified once here as PostgreSQL classifies it
//! (`53100 disk_full` for a full disk or quota, `58030 io_error` for the
//! rest), without the paths or addresses the underlying error names: those
//! go to the server's log only.

use std::error::Error;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use slatedb::object_store::path::Path;
use slatedb::object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

/// What kind of fault storage reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// No space left on the device, or a quota reached (`53100`).
    DiskFull,
    /// Any other failure: I/O errors, an object store that refuses or does
    /// not answer (`58030`).
    Io,
}

/// A storage failure as clients may see it: its kind and a reason that
/// names no path or address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// Its kind.
    pub kind: FaultKind,
    /// What the operating system or the object store said, e.g. `No space
    /// left on device (os error 28)`.
    pub reason: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl Fault {
    /// Classifies `error` by the innermost error of its chain: an
    /// [`std::io::Error`] of a full device or quota is [`FaultKind::DiskFull`];
    /// the reason is the innermost error's text (an operating system's
    /// message, never the path an outer error adds).
    pub fn of(error: &(dyn Error + 'static)) -> Fault {
        let mut innermost: &(dyn Error + 'static) = error;
        let mut kind = FaultKind::Io;
        let mut current = Some(error);
        while let Some(e) = current {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                if is_disk_full(io) {
                    kind = FaultKind::DiskFull;
                }
            }
            innermost = e;
            current = match e.downcast_ref::<std::io::Error>() {
                // `io::Error::source` skips the error it wraps.
                Some(io) => io.get_ref().map(|inner| inner as &(dyn Error + 'static)),
                None => e.source(),
            };
        }
        Fault {
            kind,
            reason: first_line(&innermost.to_string()),
        }
    }

    /// A fault described by `reason` (which must name no path).
    pub fn io(reason: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::Io,
            reason: reason.into(),
        }
    }
}

fn is_disk_full(error: &std::io::Error) -> bool {
    // ENOSPC and EDQUOT on Linux.
    error.kind() == std::io::ErrorKind::StorageFull
        || error.kind() == std::io::ErrorKind::QuotaExceeded
        || matches!(error.raw_os_error(), Some(28 | 122))
}

/// A timeout as messages show it (`10s`, `500ms`).
pub fn format_timeout(timeout: std::time::Duration) -> String {
    if timeout.subsec_millis() == 0 {
        format!("{}s", timeout.as_secs())
    } else {
        format!("{}ms", timeout.as_millis())
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// The faults one catalog's storage reported last (see the module docs).
#[derive(Debug, Default)]
pub struct StorageHealth {
    writes: Mutex<Option<(Instant, Fault)>>,
    reads: Mutex<Option<(Instant, Fault)>>,
}

/// Which requests a fault belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Requests {
    Writes,
    Reads,
}

impl StorageHealth {
    fn slot(&self, requests: Requests) -> std::sync::MutexGuard<'_, Option<(Instant, Fault)>> {
        match requests {
            Requests::Writes => &self.writes,
            Requests::Reads => &self.reads,
        }
        .lock()
        .unwrap_or_else(|e| e.into_inner())
    }

    fn record(&self, requests: Requests, error: &slatedb::object_store::Error) {
        let fault = Fault::of(error);
        let mut slot = self.slot(requests);
        if slot.is_none() {
            // Once per episode, with everything the error says.
            tracing::error!(?requests, %error, "catalog storage failed; retrying until it answers");
        }
        *slot = Some((Instant::now(), fault));
    }

    fn clear(&self, requests: Requests) {
        let mut slot = self.slot(requests);
        if let Some((since, fault)) = slot.take() {
            tracing::warn!(?requests, %fault, after = ?since.elapsed(), "catalog storage answers again");
        }
    }

    fn observe<T>(&self, requests: Requests, result: Result<T>) -> Result<T> {
        match &result {
            Ok(_) => self.clear(requests),
            // A missing object or a failed condition is an answer, not a
            // fault of the storage.
            Err(error) if !is_answer(error) => self.record(requests, error),
            Err(_) => {}
        }
        result
    }

    /// The fault writes have met since the last write that succeeded.
    pub fn write_fault(&self) -> Option<Fault> {
        self.slot(Requests::Writes)
            .as_ref()
            .map(|(_, fault)| fault.clone())
    }

    /// The fault reads have met since the last read that succeeded.
    pub fn read_fault(&self) -> Option<Fault> {
        self.slot(Requests::Reads)
            .as_ref()
            .map(|(_, fault)| fault.clone())
    }

    /// The fault to report for a wait that gave up: the writes', else the
    /// reads', else `fallback`.
    pub fn fault_or(&self, fallback: impl FnOnce() -> Fault) -> Fault {
        self.write_fault()
            .or_else(|| self.read_fault())
            .unwrap_or_else(fallback)
    }
}

fn is_answer(error: &slatedb::object_store::Error) -> bool {
    use slatedb::object_store::Error as E;
    matches!(
        error,
        E::NotFound { .. }
            | E::AlreadyExists { .. }
            | E::Precondition { .. }
            | E::NotModified { .. }
            | E::NotImplemented { .. }
            | E::NotSupported { .. }
    )
}

/// An object store that reports its failures to a [`StorageHealth`].
#[derive(Debug)]
pub struct WatchedObjectStore {
    inner: Arc<dyn ObjectStore>,
    health: Arc<StorageHealth>,
}

impl WatchedObjectStore {
    /// `inner`, watched by `health`.
    pub fn new(inner: Arc<dyn ObjectStore>, health: Arc<StorageHealth>) -> WatchedObjectStore {
        WatchedObjectStore { inner, health }
    }
}

impl fmt::Display for WatchedObjectStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Watched({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for WatchedObjectStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        let result = self.inner.put_opts(location, payload, opts).await;
        self.health.observe(Requests::Writes, result)
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        let result = self.inner.put_multipart_opts(location, opts).await;
        self.health.observe(Requests::Writes, result)
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let result = self.inner.get_opts(location, options).await;
        self.health.observe(Requests::Reads, result)
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let result = self.inner.get_ranges(location, ranges).await;
        self.health.observe(Requests::Reads, result)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        let health = self.health.clone();
        self.inner
            .delete_stream(locations)
            .map(move |result| health.observe(Requests::Writes, result))
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let health = self.health.clone();
        self.inner
            .list(prefix)
            .map(move |result| health.observe(Requests::Reads, result))
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let result = self.inner.list_with_delimiter(prefix).await;
        self.health.observe(Requests::Reads, result)
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        let result = self.inner.copy_opts(from, to, options).await;
        self.health.observe(Requests::Writes, result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrapper(std::io::Error);

    impl fmt::Display for Wrapper {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(
                f,
                "Unable to write /srv/secret/lake/databases/x: {}",
                self.0
            )
        }
    }

    impl Error for Wrapper {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_full_disk_is_53100_and_names_no_path() {
        let error = slatedb::object_store::Error::Generic {
            store: "LocalFileSystem",
            source: Box::new(Wrapper(std::io::Error::from_raw_os_error(28))),
        };
        let fault = Fault::of(&error);
        assert_eq!(fault.kind, FaultKind::DiskFull);
        assert!(fault.reason.contains("No space left on device"), "{fault}");
        assert!(!fault.reason.contains("/srv"), "{fault}");
        let other = Fault::of(&std::io::Error::from_raw_os_error(5));
        assert_eq!(other.kind, FaultKind::Io);
    }

    #[tokio::test]
    async fn a_fault_lasts_until_a_request_of_its_kind_succeeds() {
        let health = Arc::new(StorageHealth::default());
        let failing = slatedb::object_store::Error::Generic {
            store: "test",
            source: Box::new(std::io::Error::from_raw_os_error(28)),
        };
        let _ = health.observe::<()>(Requests::Writes, Err(failing));
        assert_eq!(health.write_fault().unwrap().kind, FaultKind::DiskFull);
        let _ = health.observe(Requests::Reads, Ok(()));
        assert!(health.write_fault().is_some(), "a read does not clear it");
        let missing = slatedb::object_store::Error::NotFound {
            path: "x".into(),
            source: "gone".into(),
        };
        let _ = health.observe::<()>(Requests::Reads, Err(missing));
        assert!(
            health.read_fault().is_none(),
            "a missing object is an answer"
        );
        let _ = health.observe(Requests::Writes, Ok(()));
        assert!(health.write_fault().is_none());
    }
}
