"""appsrc ! cudanms ! appsink as the Python tests drive it: black GRAY8
frames pushed one by one, cudanms's output pulled from the appsink.

Shared by tests/gst/test_python_meta.py and
tests/pipelines/test_meta_helpers.py; a test imports it after gi's Gst 1.0
is required (it skips, exit 77, without gi)."""


def gray_pipeline(width, height, nms_props):
    """appsrc name=src ! cudanms NMS_PROPS ! appsink name=sink for
    width x height GRAY8 at 30/1, set PLAYING: (pipeline, src, sink)."""
    from gi.repository import Gst
    pipeline = Gst.parse_launch(
        "appsrc name=src format=time caps=video/x-raw,format=GRAY8,"
        "width=%d,height=%d,framerate=30/1 ! cudanms %s "
        "! appsink name=sink sync=false" % (width, height, nms_props))
    src = pipeline.get_by_name("src")
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    return pipeline, src, sink


def gray_frame(width, height, k):
    """Frame k of the stream: a black GRAY8 buffer at k/30 s, 1/30 s long."""
    from gi.repository import Gst
    buf = Gst.Buffer.new_wrapped(bytes(width * height))
    buf.pts = k * Gst.SECOND // 30
    buf.duration = Gst.SECOND // 30
    return buf
