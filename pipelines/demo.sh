#!/bin/sh
# The demo: synthetic YOLOv8 tensors from tensorinject (a seeded scene of
# moving objects, as a detector would see it) go through cudanms. No GPU, no
# model. It
#  1. prints the detections of the first FRAMES frames (cudanms-print);
#  2. draws 60 frames of the same scene, its objects painted by tensorinject
#     (draw-objects=true) and cudanms's boxes and labels on them
#     (python/overlay.py: cairooverlay), into OUT_DIR: frame-*.png,
#     contact-sheet.png and detections.jsonl (one JSON line per frame);
#  3. prints the oriented detections of 2 frames of a YOLOv8-OBB scene
#     (tensorinject layout=yolov8-obb: rotated, turning objects of the 15
#     DOTA classes) that cudanms reads as oriented boxes by the tensor's id
#     yolo-v8-obb-out: each ROI is the box's axis-aligned hull, with its
#     centre, size and angle (radians);
#  4. draws 60 frames of that scene, its rotated objects painted by
#     tensorinject and each oriented detection as its rotated rectangle
#     (overlay.py --layout yolov8-obb), into OUT_DIR: obb-frame-*.png,
#     obb-contact-sheet.png and obb-detections.jsonl;
#  5. prints the kept lanes of 2 frames of a road scene (tensorinject
#     layout=laneatt: LaneATT lane proposals of 4 slowly swaying lanes,
#     several near-duplicate proposals each) that cudanms reads as lanes by
#     the tensor's id laneatt-proposals (model-size=640x360, LaneATT's
#     input): one ROI per lane, labelled lane;
#  6. draws 30 frames of that road, its lane markings painted by
#     tensorinject and each kept lane as a polyline through its points
#     (overlay.py --layout laneatt), into OUT_DIR: lanes-frame-*.png,
#     lanes-contact-sheet.png and lanes-detections.jsonl;
#  7. prints 2 frames of a pose scene (tensorinject layout=yolov8-pose:
#     people as COCO skeletons) through cudanms layout=yolov8-pose, and
#     draws 60 frames with each person's box and skeleton (overlay.py
#     --layout yolov8-pose): pose-frame-*.png, pose-contact-sheet.png,
#     pose-detections.jsonl;
#  8. draws 60 frames of a segmentation scene (tensorinject
#     layout=yolov8-seg: shapes encoded as prototypes and coefficients)
#     through cudanms layout=yolov8-seg, each kept box's mask filled
#     (overlay.py --layout yolov8-seg): seg-frame-*.png,
#     seg-contact-sheet.png, seg-detections.jsonl.
#   sh pipelines/demo.sh [BUILD_DIR] [FRAMES] [OUT_DIR]
# score-threshold 0.3 sits above the scene's background noise (<= 0.30);
# 0.5 above the lane scene's background proposals (< 0.12).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
frames=${2:-10}
out=${3:-demo-out}
GST_PLUGIN_PATH_1_0="$build/gst${GST_PLUGIN_PATH_1_0:+:$GST_PLUGIN_PATH_1_0}"
export GST_PLUGIN_PATH_1_0
"$build/pipelines/cudanms-print" \
  videotestsrc num-buffers="$frames" \
  ! video/x-raw,format=I420,width=1280,height=720,framerate=30/1 \
  ! tensorinject seed=7 draw-objects=true \
  ! cudanms name=nms iou=0.45 score-threshold=0.3 label-file="$here/coco.names" \
  ! fakesink
/usr/bin/python3 "$here/python/overlay.py" --out "$out" --frames 60 \
  --width 1280 --height 720 --seed 7 --score-threshold 0.3
echo "demo: oriented boxes (YOLOv8-OBB)"
"$build/pipelines/cudanms-print" \
  videotestsrc num-buffers=2 \
  ! video/x-raw,format=I420,width=1280,height=720,framerate=30/1 \
  ! tensorinject layout=yolov8-obb tensor-id=yolo-v8-obb-out num-classes=15 \
      seed=4 num-objects=4 \
  ! cudanms name=nms iou=0.45 score-threshold=0.3 label-file="$here/dota.names" \
  ! fakesink
/usr/bin/python3 "$here/python/overlay.py" --out "$out" --frames 60 \
  --width 1280 --height 720 --layout yolov8-obb --seed 4 --num-objects 4 \
  --score-threshold 0.3
echo "demo: lanes (LaneATT)"
"$build/pipelines/cudanms-print" \
  videotestsrc num-buffers=2 \
  ! video/x-raw,format=I420,width=1280,height=720,framerate=30/1 \
  ! tensorinject layout=laneatt seed=3 \
  ! cudanms name=nms model-size=640x360 score-threshold=0.5 \
  ! fakesink
/usr/bin/python3 "$here/python/overlay.py" --out "$out" --frames 30 \
  --width 1280 --height 720 --layout laneatt --seed 3 --score-threshold 0.5
echo "demo: keypoints (YOLOv8-pose)"
"$build/pipelines/cudanms-print" \
  videotestsrc num-buffers=2 \
  ! video/x-raw,format=I420,width=1280,height=720,framerate=30/1 \
  ! tensorinject layout=yolov8-pose seed=3 num-objects=5 \
  ! cudanms name=nms layout=yolov8-pose iou=0.45 score-threshold=0.3 \
      label-file="$here/coco.names" \
  ! fakesink
/usr/bin/python3 "$here/python/overlay.py" --out "$out" --frames 60 \
  --width 1280 --height 720 --layout yolov8-pose --seed 3 --num-objects 5 \
  --score-threshold 0.3
echo "demo: instance masks (YOLOv8-seg)"
/usr/bin/python3 "$here/python/overlay.py" --out "$out" --frames 60 \
  --width 1280 --height 720 --layout yolov8-seg --seed 2 --num-objects 6 \
  --score-threshold 0.3
echo "demo: open $out/contact-sheet.png, $out/obb-contact-sheet.png, $out/lanes-contact-sheet.png, $out/pose-contact-sheet.png and $out/seg-contact-sheet.png to see the boxes, lanes, skeletons and masks"
