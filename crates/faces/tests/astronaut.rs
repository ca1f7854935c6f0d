//! The detector on a real photograph, scikit-image's astronaut: the face's box lands where the
//! TFLite runtime puts it, alone and in a landscape frame, and a picture without a face has
//! none.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::time::Instant;

use caption_faces::{Face, FaceDetector};
use caption_testkit::faces::{ASTRONAUT_FACE_512, astronaut_rgb};

fn iou(face: &Face, [x0, y0, x1, y1]: [f64; 4]) -> f64 {
    let (fx0, fy0, fx1, fy1) = (
        f64::from(face.x0),
        f64::from(face.y0),
        f64::from(face.x1),
        f64::from(face.y1),
    );
    let w = (fx1.min(x1) - fx0.max(x0)).max(0.0);
    let h = (fy1.min(y1) - fy0.max(y0)).max(0.0);
    let inter = w * h;
    inter / ((fx1 - fx0) * (fy1 - fy0) + (x1 - x0) * (y1 - y0) - inter)
}

/// The faces in a picture, the time the detector took printed.
fn detect_one(width: u32, height: u32, rgb: &[u8]) -> Vec<Face> {
    let detector = FaceDetector::open_installed().unwrap();
    let started = Instant::now();
    let faces = detector.detect(width, height, rgb).unwrap();
    let ms = started.elapsed().as_secs_f64() * 1e3;
    eprintln!("{width}x{height}: {faces:?} in {ms:.1} ms");
    faces
}

#[test]
fn the_astronauts_face_is_found_where_tflite_finds_it() {
    let faces = detect_one(512, 512, &astronaut_rgb(512).unwrap());
    assert_eq!(faces.len(), 1, "{faces:?}");
    let face = &faces[0];
    let overlap = iou(face, ASTRONAUT_FACE_512);
    assert!(
        overlap > 0.9,
        "intersection over union {overlap:.3}: {face:?}"
    );
    // TFLite's score on the same picture is 0.911.
    assert!((face.score - 0.911).abs() < 0.03, "score {}", face.score);
    // The mouth lies below the eyes, between them.
    let (mouth, right_eye, left_eye) = (face.mouth(), face.keypoints[0], face.keypoints[1]);
    assert!(mouth.1 > right_eye.1 && mouth.1 > left_eye.1, "{face:?}");
    assert!(
        (right_eye.0.min(left_eye.0)..right_eye.0.max(left_eye.0)).contains(&mouth.0),
        "{face:?}"
    );
}

#[test]
fn in_a_landscape_frame_the_face_is_found_at_its_place() {
    // The astronaut at 810 x 810 with its left edge at x = 1050 of a grey 1920 x 1080 frame,
    // as the reframe tests' clips show it.
    let (side, left, top) = (810_usize, 1050_usize, 270_usize);
    let astronaut = astronaut_rgb(810).unwrap();
    let mut frame = [80_u8, 88, 96].repeat(1920 * 1080);
    for y in 0..side {
        let dst = ((top + y) * 1920 + left) * 3;
        frame[dst..dst + side * 3].copy_from_slice(&astronaut[y * side * 3..][..side * 3]);
    }
    let faces = detect_one(1920, 1080, &frame);
    assert_eq!(faces.len(), 1, "{faces:?}");
    let scale = 810.0 / 512.0;
    let truth = ASTRONAUT_FACE_512.map(|v| v * scale);
    let truth = [
        truth[0] + 1050.0,
        truth[1] + 270.0,
        truth[2] + 1050.0,
        truth[3] + 270.0,
    ];
    let overlap = iou(&faces[0], truth);
    assert!(
        overlap > 0.7,
        "intersection over union {overlap:.3}: {faces:?} vs {truth:?}"
    );
}

#[test]
fn a_picture_without_a_face_has_none() {
    let detector = FaceDetector::open_installed().unwrap();
    let grey = [90_u8, 90, 90].repeat(640 * 360);
    assert!(detector.detect(640, 360, &grey).unwrap().is_empty());
    // The astronaut's top-left corner (the flag and the rocket model) has no face either.
    let astronaut = astronaut_rgb(512).unwrap();
    let corner: Vec<u8> = (0..150)
        .flat_map(|y| astronaut[y * 512 * 3..][..150 * 3].to_vec())
        .collect();
    assert!(detector.detect(150, 150, &corner).unwrap().is_empty());
}

#[test]
fn a_picture_of_the_wrong_size_is_refused() {
    let detector = FaceDetector::open_installed().unwrap();
    let error = detector.detect(10, 10, &[0; 10]).unwrap_err();
    assert!(error.to_string().contains("300"), "{error}");
    assert!(detector.detect(0, 10, &[]).is_err());
}

/// The detection `scripts/faces_reference.py` made with the TFLite runtime on the same pixels.
#[test]
fn the_network_matches_the_tflite_runtime() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/faces/astronaut-blazeface.json"
    );
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let expected = &reference["faces"][0];
    let faces = detect_one(512, 512, &astronaut_rgb(512).unwrap());
    assert_eq!(faces.len(), reference["faces"].as_array().unwrap().len());
    let face = &faces[0];
    let number = |v: &serde_json::Value| v.as_f64().unwrap();
    let score_error = (f64::from(face.score) - number(&expected["score"])).abs();
    let mut worst = 0.0_f64;
    for (got, want) in [face.x0, face.y0, face.x1, face.y1]
        .iter()
        .zip(expected["box"].as_array().unwrap())
    {
        worst = worst.max((f64::from(*got) - number(want)).abs());
    }
    for (got, want) in face
        .keypoints
        .iter()
        .zip(expected["keypoints"].as_array().unwrap())
    {
        worst = worst.max((f64::from(got.0) - number(&want[0])).abs());
        worst = worst.max((f64::from(got.1) - number(&want[1])).abs());
    }
    eprintln!("against TFLite: score off by {score_error:.2e}, points by {worst:.4} px");
    assert!(score_error < 1e-3, "score off by {score_error}");
    assert!(worst < 0.02, "a point off by {worst} px");
}
