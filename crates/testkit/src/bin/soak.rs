//! The soak of `captions serve` (see `caption_testkit::soak`); `scripts/soak` builds and runs
//! it. Prints the report and exits 1 when it lists problems (2 when the soak could not run).
//!
//! ```text
//! soak [--minutes N] [--clients N] [--no-faults | --faults sigkill,postgres,s3,disk] [--seed N]
//!      [--log-dir DIR]
//! ```
//!
//! The `captions` binary is `CAPTIONS_BIN`.

#![allow(clippy::print_stdout, reason = "the report is the program's output")]

use std::path::PathBuf;
use std::process::ExitCode;

use caption_testkit::soak::{FaultKind, SoakOptions, run};

const USAGE: &str = "usage: soak [--minutes N (60)] [--clients N (8)] \
     [--no-faults | --faults sigkill,postgres,s3,disk (all)] [--seed N] [--log-dir DIR]";

fn options() -> Result<SoakOptions, String> {
    let binary = std::env::var_os("CAPTIONS_BIN")
        .map(PathBuf::from)
        .ok_or("set CAPTIONS_BIN to the captions binary (scripts/soak does)")?;
    let mut options = SoakOptions::new(&binary);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--minutes" => {
                options.minutes = value("--minutes")?
                    .parse()
                    .map_err(|e| format!("--minutes: {e}"))?;
            }
            "--clients" => {
                options.clients = value("--clients")?
                    .parse()
                    .map_err(|e| format!("--clients: {e}"))?;
            }
            "--seed" => {
                options.seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?;
            }
            "--log-dir" => options.log_dir = Some(PathBuf::from(value("--log-dir")?)),
            "--no-faults" => options.faults = false,
            "--faults" => {
                options.fault_kinds = value("--faults")?
                    .split(',')
                    .map(|name| {
                        FaultKind::from_name(name).ok_or(format!(
                            "--faults: unknown fault {name:?} (sigkill, postgres, s3, disk)"
                        ))
                    })
                    .collect::<Result<_, _>>()?;
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    eprintln!(
        "soak: {} min, {} clients, faults {}, seed {} (the report follows the run)",
        options.minutes,
        options.clients,
        if options.faults { "on" } else { "off" },
        options.seed
    );
    match run(&options) {
        Ok(report) => {
            println!("{report}");
            if report.problems().is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("soak could not run: {e}");
            ExitCode::from(2)
        }
    }
}
