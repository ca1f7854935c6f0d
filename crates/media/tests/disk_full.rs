//! A disk that fills while a burn writes its output: the burn fails with `disk_full` (a
//! service answers 507 and retries its job), not `internal`, and leaves no partial file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use caption_core::ErrorCode;
use caption_media::{BurnOptions, NoOverlay, burn};
use common::{clip_with_tone, path, tmp};

#[test]
fn a_disk_filling_during_the_burn_is_disk_full() {
    let disk = match caption_testkit::Tmpfs::mount(2) {
        Ok(disk) => disk,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    // Noise compresses badly: the output outgrows the 2 MiB disk within seconds of video.
    let dir = tmp();
    let input = path(dir.path(), "noise.mp4");
    clip_with_tone(
        &input,
        "nullsrc=s=640x360:r=30,geq=random(1)*255:128:128",
        8.0,
        &[
            "-t",
            "8",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-qp",
            "0",
            "-c:a",
            "aac",
        ],
    );
    let output = disk.path().join("out.mp4");
    let err = burn(&input, &output, &NoOverlay, &BurnOptions::default()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::DiskFull, "{err}");
    let left: Vec<_> = std::fs::read_dir(disk.path()).unwrap().collect();
    assert!(left.is_empty(), "left on the disk: {left:?}");
}
