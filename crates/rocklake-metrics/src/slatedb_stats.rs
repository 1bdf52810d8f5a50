//! SlateDB's own statistics (WAL writes, memtable flushes, L0 files,
//! compactions, object-store requests, caches) of every open lake, as
//! Prometheus metrics labelled with the lake.
//!
//! Each lake's database records into a [`LakeRecorder`], which adds the
//! label `lake` and keeps the values in a SlateDB `DefaultMetricsRecorder`
//! of that lake (a lake opened again, as when a standby takes over, starts
//! a new one: SlateDB registers each metric once per recorder); at each
//! scrape [`SlateDbStats`] reads every lake's snapshot and
//! encodes it, one family per SlateDB metric name (`slatedb.db.write_ops`
//! becomes `slatedb_db_write_ops`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::MetricType;
use slatedb_common::metrics::{
    CounterFn, DefaultMetricsRecorder, GaugeFn, HistogramFn, Metric, MetricValue, MetricsRecorder,
    UpDownCounterFn,
};

/// The SlateDB statistics of every lake, collected at each scrape.
#[derive(Clone, Default)]
pub struct SlateDbStats {
    /// The recorder of each lake's latest opening.
    recorders: Arc<Mutex<BTreeMap<String, Arc<DefaultMetricsRecorder>>>>,
}

impl std::fmt::Debug for SlateDbStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SlateDbStats")
    }
}

impl SlateDbStats {
    /// The recorder of one lake's database.
    pub fn recorder(&self, lake: &str) -> LakeRecorder {
        let recorder = Arc::new(DefaultMetricsRecorder::new());
        self.recorders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(lake.to_string(), recorder.clone());
        LakeRecorder {
            lake: lake.to_string(),
            recorder,
        }
    }
}

/// What a lake's SlateDB database records into: the shared recorder, with
/// the label `lake` added to every metric.
pub struct LakeRecorder {
    lake: String,
    recorder: Arc<DefaultMetricsRecorder>,
}

impl LakeRecorder {
    fn labels<'a>(&'a self, labels: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut all = vec![("lake", self.lake.as_str())];
        all.extend_from_slice(labels);
        all
    }
}

impl MetricsRecorder for LakeRecorder {
    fn register_counter(
        &self,
        name: &str,
        description: &str,
        labels: &[(&str, &str)],
    ) -> Arc<dyn CounterFn> {
        self.recorder
            .register_counter(name, description, &self.labels(labels))
    }

    fn register_gauge(
        &self,
        name: &str,
        description: &str,
        labels: &[(&str, &str)],
    ) -> Arc<dyn GaugeFn> {
        self.recorder
            .register_gauge(name, description, &self.labels(labels))
    }

    fn register_up_down_counter(
        &self,
        name: &str,
        description: &str,
        labels: &[(&str, &str)],
    ) -> Arc<dyn UpDownCounterFn> {
        self.recorder
            .register_up_down_counter(name, description, &self.labels(labels))
    }

    fn register_histogram(
        &self,
        name: &str,
        description: &str,
        labels: &[(&str, &str)],
        boundaries: &[f64],
    ) -> Arc<dyn HistogramFn> {
        self.recorder
            .register_histogram(name, description, &self.labels(labels), boundaries)
    }
}

impl Collector for SlateDbStats {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let recorders: Vec<Arc<DefaultMetricsRecorder>> = self
            .recorders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        let snapshots: Vec<_> = recorders.iter().map(|r| r.snapshot()).collect();
        // One family per name: OpenMetrics wants a family's samples together.
        let mut families: BTreeMap<String, Vec<&Metric>> = BTreeMap::new();
        for metric in snapshots.iter().flat_map(|snapshot| snapshot.all()) {
            families
                .entry(prometheus_name(&metric.name))
                .or_default()
                .push(metric);
        }
        for (name, members) in families {
            let first = members[0];
            let metric_type = match first.value {
                MetricValue::Counter(_) => MetricType::Counter,
                MetricValue::Gauge(_) | MetricValue::UpDownCounter(_) => MetricType::Gauge,
                MetricValue::Histogram { .. } => MetricType::Histogram,
            };
            let mut family =
                encoder.encode_descriptor(&name, &first.description, None, metric_type)?;
            for member in members {
                // A family holds one type: a name SlateDB reused for another
                // type is left out rather than encoded wrongly.
                if std::mem::discriminant(&member.value) == std::mem::discriminant(&first.value) {
                    let labels: Vec<(String, String)> = member.labels.clone();
                    let sample = family.encode_family(&labels)?;
                    Sample(&member.value).encode(sample)?;
                }
            }
        }
        Ok(())
    }
}

/// SlateDB's dotted name as a Prometheus name (a counter's `_total` is
/// added by the encoder).
fn prometheus_name(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    name.strip_suffix("_total").unwrap_or(&name).to_string()
}

/// One SlateDB value, encoded as its Prometheus type.
struct Sample<'a>(&'a MetricValue);

impl EncodeMetric for Sample<'_> {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        match self.0 {
            MetricValue::Counter(value) => encoder
                .encode_counter::<prometheus_client::encoding::NoLabelSet, u64, u64>(value, None),
            MetricValue::Gauge(value) | MetricValue::UpDownCounter(value) => {
                encoder.encode_gauge(value)
            }
            MetricValue::Histogram {
                count,
                sum,
                boundaries,
                bucket_counts,
                ..
            } => {
                // SlateDB counts each bucket on its own, with one overflow
                // bucket past the last boundary; the encoder accumulates.
                let buckets: Vec<(f64, u64)> = boundaries
                    .iter()
                    .copied()
                    .chain(std::iter::once(f64::MAX))
                    .zip(bucket_counts.iter().copied())
                    .collect();
                encoder.encode_histogram::<prometheus_client::encoding::NoLabelSet>(
                    *sum, *count, &buckets, None,
                )
            }
        }
    }

    fn metric_type(&self) -> MetricType {
        match self.0 {
            MetricValue::Counter(_) => MetricType::Counter,
            MetricValue::Gauge(_) | MetricValue::UpDownCounter(_) => MetricType::Gauge,
            MetricValue::Histogram { .. } => MetricType::Histogram,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lakes_share_a_family_with_their_label() {
        let stats = SlateDbStats::default();
        let a = stats.recorder("lake");
        let b = stats.recorder("other");
        a.register_counter("slatedb.db.write_ops", "writes", &[])
            .increment(3);
        b.register_counter("slatedb.db.write_ops", "writes", &[])
            .increment(5);
        a.register_histogram("slatedb.flush.seconds", "flush time", &[], &[0.1, 1.0])
            .record(0.5);
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(stats));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert_eq!(
            text.matches("# TYPE slatedb_db_write_ops counter").count(),
            1
        );
        assert!(
            text.contains("slatedb_db_write_ops_total{lake=\"lake\"} 3"),
            "{text}"
        );
        assert!(
            text.contains("slatedb_db_write_ops_total{lake=\"other\"} 5"),
            "{text}"
        );
        assert!(
            text.contains("slatedb_flush_seconds_bucket{le=\"1.0\",lake=\"lake\"} 1"),
            "{text}"
        );
    }
}
