//! The standard `process_*` metrics (the names every Prometheus client library
//! exports, so stock dashboards and alerts read them), taken from `/proc/self`
//! at each scrape. Where `/proc` is missing (not Linux) a family is left out
//! rather than reported as zero.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Clock ticks per second of `/proc/<pid>/stat`. Linux reports CPU times in
/// USER_HZ, which is 100 on every architecture it ships for (Prometheus'
/// own procfs library makes the same assumption).
const USER_HZ: f64 = 100.0;

#[derive(Debug, Default)]
pub struct ProcessCollector;

/// One reading of the process, each figure absent when it could not be read.
#[derive(Debug, Default, PartialEq)]
pub struct Reading {
    pub cpu_seconds: Option<f64>,
    pub resident_bytes: Option<i64>,
    pub virtual_bytes: Option<i64>,
    pub threads: Option<i64>,
    pub open_fds: Option<i64>,
    pub max_fds: Option<i64>,
    pub start_time_seconds: Option<f64>,
}

impl Reading {
    pub fn now() -> Self {
        let stat = std::fs::read_to_string("/proc/self/stat").ok();
        let status = std::fs::read_to_string("/proc/self/status").ok();
        let fields = stat.as_deref().map(stat_fields).unwrap_or_default();
        let field = |n: usize| fields.get(n).and_then(|v| v.parse::<f64>().ok());
        let boot_time = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| boot_time(&s));
        Self {
            // utime and stime: fields 14 and 15 of proc_pid_stat(5).
            cpu_seconds: field(14)
                .zip(field(15))
                .map(|(user, system)| (user + system) / USER_HZ),
            resident_bytes: status.as_deref().and_then(|s| status_kib(s, "VmRSS")),
            virtual_bytes: status.as_deref().and_then(|s| status_kib(s, "VmSize")),
            threads: status
                .as_deref()
                .and_then(|s| status_value(s, "Threads"))
                .and_then(|v| v.parse().ok()),
            open_fds: std::fs::read_dir("/proc/self/fd")
                .ok()
                .map(|entries| entries.count() as i64),
            max_fds: std::fs::read_to_string("/proc/self/limits")
                .ok()
                .and_then(|s| max_open_files(&s)),
            // starttime: field 22, in ticks after boot.
            start_time_seconds: field(22)
                .zip(boot_time)
                .map(|(ticks, boot)| boot + ticks / USER_HZ),
        }
    }
}

/// The fields of `/proc/self/stat`, numbered from 1 as in proc_pid_stat(5).
/// The command name (field 2) may hold spaces and parentheses, so the fields
/// after it are counted from its last `)`.
fn stat_fields(stat: &str) -> Vec<&str> {
    let Some(end) = stat.rfind(')') else {
        return Vec::new();
    };
    let mut fields = vec!["", "", ""];
    fields.extend(stat[end + 1..].split_whitespace());
    fields
}

fn status_value<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name == key).then(|| value.trim())
    })
}

fn status_kib(status: &str, key: &str) -> Option<i64> {
    let value = status_value(status, key)?;
    let kib: i64 = value.strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib * 1024)
}

fn boot_time(proc_stat: &str) -> Option<f64> {
    proc_stat
        .lines()
        .find_map(|line| line.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

fn max_open_files(limits: &str) -> Option<i64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    // "Max open files            1024                 524288               files"
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let reading = Reading::now();
        if let Some(v) = reading.cpu_seconds {
            counter(
                &mut encoder,
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds",
                v,
            )?;
        }
        let gauges = [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                reading.resident_bytes,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes",
                reading.virtual_bytes,
            ),
            (
                "process_threads",
                "Number of OS threads in the process",
                reading.threads,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors",
                reading.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors",
                reading.max_fds,
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(v) = value {
                let gauge = ConstGauge::new(v);
                gauge.encode(encoder.encode_descriptor(
                    name,
                    help,
                    None,
                    gauge.metric_type(),
                )?)?;
            }
        }
        if let Some(v) = reading.start_time_seconds {
            let gauge = ConstGauge::new(v);
            let help = "Start time of the process since the Unix epoch in seconds";
            gauge.encode(encoder.encode_descriptor(
                "process_start_time_seconds",
                help,
                None,
                gauge.metric_type(),
            )?)?;
        }
        Ok(())
    }
}

fn counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: f64,
) -> Result<(), std::fmt::Error> {
    let counter = ConstCounter::new(value);
    counter.encode(encoder.encode_descriptor(name, help, None, counter.metric_type())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_count_past_a_command_name_with_spaces_and_parentheses() {
        let stat = "4242 (dms (bridge) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 12345 1000 200";
        let fields = stat_fields(stat);
        assert_eq!(fields[3], "S");
        assert_eq!(fields[14], "250");
        assert_eq!(fields[15], "50");
        assert_eq!(fields[22], "12345");
    }

    #[test]
    fn status_and_limits_are_read_by_name() {
        let status = "Name:\tdms-bridge\nVmSize:\t  123456 kB\nVmRSS:\t   2048 kB\nThreads:\t7\n";
        assert_eq!(status_kib(status, "VmRSS"), Some(2048 * 1024));
        assert_eq!(status_kib(status, "VmSize"), Some(123456 * 1024));
        assert_eq!(status_value(status, "Threads"), Some("7"));
        assert_eq!(status_kib(status, "VmSwap"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n";
        assert_eq!(max_open_files(limits), Some(1024));
        assert_eq!(
            boot_time("cpu 1 2 3\nbtime 1764300000\n"),
            Some(1_764_300_000.0)
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_read_whole_on_linux() {
        let reading = Reading::now();
        assert!(reading.resident_bytes.is_some_and(|b| b > 0), "{reading:?}");
        assert!(reading.threads.is_some_and(|t| t >= 1), "{reading:?}");
        assert!(reading.open_fds.is_some_and(|n| n >= 3), "{reading:?}");
        assert!(reading.cpu_seconds.is_some(), "{reading:?}");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        let started = reading.start_time_seconds.unwrap_or_default();
        assert!(
            started > now - 86_400.0 && started <= now + 1.0,
            "{started} vs {now}"
        );
    }
}
