//! Which Ascend NPUs this machine has: `npu-smi info` when it runs, else the `/dev/davinciN`
//! device files, else none (and the UI offers the CPU backends).

use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NpuDevice {
    pub id: u32,
    /// `910B3`; empty when only the device file is known.
    pub name: String,
    /// `OK`, `Warning`, `Alarm`, … as npu-smi says.
    pub health: String,
    pub bus_id: Option<String>,
    /// HBM used / total in MB.
    pub hbm_mb: Option<(u64, u64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NpuStatus {
    pub devices: Vec<NpuDevice>,
    /// Where the list came from (`npu-smi info`, `/dev/davinci*`), or why there is none.
    pub source: String,
}

impl NpuStatus {
    /// One line for the status bar.
    pub fn summary(&self) -> String {
        if self.devices.is_empty() {
            return format!("no NPU ({}): CPU backends only", self.source);
        }
        let names: Vec<String> = self
            .devices
            .iter()
            .map(|d| {
                let mut s = format!("NPU {}", d.id);
                if !d.name.is_empty() {
                    s.push_str(&format!(" {}", d.name));
                }
                if !d.health.is_empty() && d.health != "OK" {
                    s.push_str(&format!(" ({})", d.health));
                }
                s
            })
            .collect();
        names.join(", ")
    }
}

/// Looks for NPUs: runs `npu-smi info` (bounded in time), else lists `/dev/davinci*`.
pub fn detect() -> NpuStatus {
    match run_npu_smi() {
        Ok(text) => {
            let devices = parse_npu_smi(&text);
            if !devices.is_empty() {
                return NpuStatus {
                    devices,
                    source: "npu-smi info".into(),
                };
            }
            from_dev(Path::new("/dev"), "npu-smi info listed no device")
        }
        Err(why) => from_dev(Path::new("/dev"), &why),
    }
}

fn run_npu_smi() -> Result<String, String> {
    use std::process::{Command, Stdio};
    let mut child = Command::new("npu-smi")
        .arg("info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "npu-smi not found".to_string(),
            _ => format!("npu-smi: {e}"),
        })?;
    // A wedged driver can make npu-smi hang: give it a few seconds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("npu-smi did not answer in 5 s".into());
            }
        }
    }
    let mut out = String::new();
    use std::io::Read;
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    Ok(out)
}

/// Devices from the `/dev/davinciN` files under `dev` (no names or health known).
pub fn from_dev(dev: &Path, why_not_smi: &str) -> NpuStatus {
    let mut ids: Vec<u32> = std::fs::read_dir(dev)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_prefix("davinci")?
                .parse()
                .ok()
        })
        .collect();
    ids.sort();
    if ids.is_empty() {
        return NpuStatus {
            devices: Vec::new(),
            source: format!("{why_not_smi}; no {}/davinci* device", dev.display()),
        };
    }
    NpuStatus {
        devices: ids
            .into_iter()
            .map(|id| NpuDevice {
                id,
                name: String::new(),
                health: String::new(),
                bus_id: None,
                hbm_mb: None,
            })
            .collect(),
        source: format!("{}/davinci* ({why_not_smi})", dev.display()),
    }
}

/// Reads the device table of `npu-smi info`. Each NPU has two rows: `| id name | health |
/// power temp hugepages |` then `| chip | bus-id | aicore memory hbm |`. Column widths and the
/// number of figures vary between versions, so rows are recognised by their content: a first
/// cell "<int> <name>" with a health word, followed by a row whose second cell is a PCI bus id.
/// The process table below the device table is ignored.
pub fn parse_npu_smi(text: &str) -> Vec<NpuDevice> {
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let head = &rows[i];
        if let Some(dev) = device_row(head) {
            let mut dev = dev;
            if let Some(next) = rows.get(i + 1).filter(|r| r.len() >= 2 && is_bus_id(r[1])) {
                dev.bus_id = Some(next[1].to_string());
                dev.hbm_mb = next.get(2).and_then(|c| last_pair(c));
                i += 1;
            }
            out.push(dev);
        }
        i += 1;
    }
    out
}

fn device_row(cells: &[&str]) -> Option<NpuDevice> {
    if cells.len() < 2 {
        return None;
    }
    let mut words = cells[0].split_whitespace();
    let id: u32 = words.next()?.parse().ok()?;
    let name = words.collect::<Vec<_>>().join(" ");
    let health = cells[1].split_whitespace().next()?.to_string();
    // The header row ("NPU Name | Health") and chip rows ("0 | 0000:C1:00.0") fail here.
    let known = ["OK", "Warning", "Alarm", "Critical", "Unknown", "NotExist"];
    if name.is_empty() || !known.iter().any(|k| health.eq_ignore_ascii_case(k)) {
        return None;
    }
    Some(NpuDevice {
        id,
        name,
        health,
        bus_id: None,
        hbm_mb: None,
    })
}

fn is_bus_id(s: &str) -> bool {
    let parts: Vec<&str> = s.split([':', '.']).collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The last `a / b` pair in a cell: HBM usage in the chip row.
fn last_pair(cell: &str) -> Option<(u64, u64)> {
    let tokens: Vec<&str> = cell.split_whitespace().collect();
    let slash = tokens.iter().rposition(|t| *t == "/")?;
    let a = tokens.get(slash.checked_sub(1)?)?.parse().ok()?;
    let b = tokens.get(slash + 1)?.parse().ok()?;
    Some((a, b))
}
