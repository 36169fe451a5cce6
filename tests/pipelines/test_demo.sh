#!/bin/sh
# pipelines/demo.sh, as the README runs it: prints the detections, then
# writes 60 annotated 1280x720 PNG frames, the contact sheet and the JSON
# lines; prints the oriented detections of the YOLOv8-OBB scene, then
# writes its 60 frames with each detection's rotated rectangle, its contact
# sheet and JSON lines (obb-*); prints the kept lanes of 2 frames of the
# road scene (4 lanes), then writes its 30 frames with each kept lane's
# polyline, its contact sheet and JSON lines (lanes-*); prints 2 frames of
# the pose scene (5 people) and writes its 60 frames and JSON lines with
# 17 keypoints a person (pose-*), and the segmentation scene's 60 frames
# and JSON lines with a mask a box (seg-*). drawn.py checks
# every frame of the three pixel by pixel (each outline's line exactly its
# class colour, every pixel away from the outlines and labels exactly the
# frame tensorinject painted).
# Exits 77 (skip) without gi's cairo.
set -eu
/usr/bin/python3 -c 'import gi; gi.require_foreign("cairo")' 2>/dev/null || {
  echo "SKIP: no python3-gi-cairo"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sh "$CUDANMS_SOURCE_ROOT/pipelines/demo.sh" "$CUDANMS_BUILD_ROOT" 3 "$out/demo" > "$out/log"
cat "$out/log"
grep -q '^3 frames, [1-9][0-9]* detections$' "$out/log"
# the oriented run: 2 frames of the same 4 objects, each with its angle
grep -q '^2 frames, 8 detections$' "$out/log"
[ "$(grep -c ' angle=' "$out/log")" -eq 8 ]
grep -q '^  #0   .* cx=.* cy=.* angle=' "$out/log"
grep -q "contact sheet $out/demo/contact-sheet.png (1952x744)" "$out/log"
[ "$(ls "$out/demo"/frame-*.png | wc -l)" -eq 60 ]
[ "$(wc -l < "$out/demo/detections.jsonl")" -eq 60 ]
# PNG header: width and height, big-endian, at bytes 16..23.
[ "$(od -An -tx1 -j16 -N8 "$out/demo/frame-00059.png" | tr -d ' \n')" = 00000500000002d0 ]
[ "$(od -An -tx1 -j16 -N8 "$out/demo/contact-sheet.png" | tr -d ' \n')" = 000007a0000002e8 ]
# the oriented pictures: 60 frames, each JSON line's objects oriented
grep -q "contact sheet $out/demo/obb-contact-sheet.png (1952x744)" "$out/log"
[ "$(ls "$out/demo"/obb-frame-*.png | wc -l)" -eq 60 ]
[ "$(wc -l < "$out/demo/obb-detections.jsonl")" -eq 60 ]
[ "$(od -An -tx1 -j16 -N8 "$out/demo/obb-frame-00059.png" | tr -d ' \n')" = 00000500000002d0 ]
[ "$(od -An -tx1 -j16 -N8 "$out/demo/obb-contact-sheet.png" | tr -d ' \n')" = 000007a0000002e8 ]
# the lanes: 2 frames of the same 4 lanes, one ROI each, labelled lane
# (the oriented run's line and this one)
[ "$(grep -c '^2 frames, 8 detections$' "$out/log")" -eq 2 ]
[ "$(grep -Ec '^  #[0-3]   lane +0\.9[0-9]{2} ' "$out/log")" -eq 8 ]
grep -q "contact sheet $out/demo/lanes-contact-sheet.png (1952x744)" "$out/log"
[ "$(ls "$out/demo"/lanes-frame-*.png | wc -l)" -eq 30 ]
[ "$(wc -l < "$out/demo/lanes-detections.jsonl")" -eq 30 ]
[ "$(od -An -tx1 -j16 -N8 "$out/demo/lanes-frame-00029.png" | tr -d ' \n')" = 00000500000002d0 ]
[ "$(od -An -tx1 -j16 -N8 "$out/demo/lanes-contact-sheet.png" | tr -d ' \n')" = 000007a0000002e8 ]
# the pose run: 2 frames of the same 5 people, labelled person; 60 frames
# whose JSON lines carry each person's 17 keypoints
grep -q '^2 frames, 10 detections$' "$out/log"
[ "$(grep -Ec '^  #[0-4]   person ' "$out/log")" -eq 10 ]
grep -q "contact sheet $out/demo/pose-contact-sheet.png (1952x744)" "$out/log"
[ "$(ls "$out/demo"/pose-frame-*.png | wc -l)" -eq 60 ]
[ "$(wc -l < "$out/demo/pose-detections.jsonl")" -eq 60 ]
/usr/bin/python3 - "$out/demo/pose-detections.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    objs = json.loads(line)["objects"]
    assert len(objs) == 5, len(objs)
    for o in objs:
        pts = o["detection"]["keypoints"]["points"]
        assert len(pts) == 17 and all(len(p) == 3 for p in pts), pts
PY
# the segmentation run: 60 frames whose JSON lines carry each box's mask,
# its runs covering its rectangle
grep -q "contact sheet $out/demo/seg-contact-sheet.png (1952x744)" "$out/log"
[ "$(ls "$out/demo"/seg-frame-*.png | wc -l)" -eq 60 ]
[ "$(wc -l < "$out/demo/seg-detections.jsonl")" -eq 60 ]
/usr/bin/python3 - "$out/demo/seg-detections.jsonl" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    for o in json.loads(line)["objects"]:
        m = o["detection"]["mask"]
        assert sum(m["counts"]) == m["width"] * m["height"], m
        assert m["x"] >= o["x"] and m["x"] + m["width"] <= o["x"] + o["w"]
        n += sum(m["counts"][1::2]) > 0
assert n > 60 * 4, n
PY
# what is drawn, frame by frame (the same options as demo.sh's overlay runs)
here=$CUDANMS_SOURCE_ROOT/tests/pipelines
/usr/bin/python3 "$here/drawn.py" "$out/demo" --seed 7 > "$out/drawn" \
  || { cat "$out/drawn"; exit 1; }
/usr/bin/python3 "$here/drawn.py" "$out/demo" --layout yolov8-obb --seed 4 \
  --num-objects 4 >> "$out/drawn" || { cat "$out/drawn"; exit 1; }
/usr/bin/python3 "$here/drawn.py" "$out/demo" --layout laneatt --seed 3 \
  --frames 30 >> "$out/drawn" || { cat "$out/drawn"; exit 1; }
cat "$out/drawn"
grep -q '^drawn: 60 frames, [1-9][0-9]* detections (0 oriented): [1-9][0-9]* outline, [1-9][0-9]* label and [1-9][0-9]* untouched pixels exact$' "$out/drawn"
grep -Eq '^drawn: 60 obb-frames, ([1-9][0-9]*) detections \(\1 oriented\): [1-9][0-9]* outline, [1-9][0-9]* label and [1-9][0-9]* untouched pixels exact$' "$out/drawn"
grep -q '^drawn: 30 lanes-frames, 120 detections (120 lanes): [1-9][0-9]* outline, [1-9][0-9]* label and [1-9][0-9]* untouched pixels exact$' "$out/drawn"
echo "OK: demo.sh prints detections and writes the pictures, boxes, rotated rectangles and lanes drawn exactly, people with keypoints and boxes with masks"
