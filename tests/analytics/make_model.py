"""Writes a tiny ONNX model whose output is a fixed tensor, for tests.

make_model.py TENSOR.npy OUT.onnx --id ID [--group GROUP]
              [--dims-order row-major|col-major] [--input WxH]

The model takes a uint8 RGB image [1, H, W, 3] named "images" and outputs
TENSOR (float32) as "output0". It carries its tensor id the two ways
onnxinference reads one: GStreamer 1.26 looks up the output name in the
ONNX model's metadata_props, 1.28 reads OUT.onnx.modelinfo (written here
too, with the dims-order given). Exit 77 (skip) without python3-onnx.
"""
import argparse
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"SKIP: {e} (Debian: python3-onnx, python3-numpy)")
    sys.exit(77)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tensor")
    ap.add_argument("out")
    ap.add_argument("--id", required=True)
    ap.add_argument("--group")
    ap.add_argument("--dims-order", default="row-major",
                    choices=["row-major", "col-major"])
    ap.add_argument("--input", default="320x240")
    a = ap.parse_args()

    t = np.load(a.tensor).astype(np.float32)
    w, h = (int(v) for v in a.input.split("x"))
    # Output = the constant tensor; the image only feeds a no-op branch
    # (ReduceMin of a uint8 image cast to float, times 0, is +0).
    nodes = [
        helper.make_node("Constant", [], ["tensor"],
                         value=numpy_helper.from_array(t, "tensor_value")),
        helper.make_node("Cast", ["images"], ["images_f"],
                         to=TensorProto.FLOAT),
        helper.make_node("ReduceMin", ["images_f"], ["min"], keepdims=0),
        helper.make_node("Constant", [], ["zero"],
                         value=numpy_helper.from_array(
                             np.zeros((), np.float32), "zero_value")),
        helper.make_node("Mul", ["min", "zero"], ["nothing"]),
        helper.make_node("Add", ["tensor", "nothing"], ["output0"]),
    ]
    graph = helper.make_graph(
        nodes, "cudanms-test",
        [helper.make_tensor_value_info("images", TensorProto.UINT8,
                                       [1, h, w, 3])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT,
                                       list(t.shape))])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7        # read by every onnxruntime Debian ships
    helper.set_model_props(model, {"output0": a.id})
    onnx.checker.check_model(model)
    onnx.save(model, a.out)

    dims = ",".join(str(d) for d in t.shape)
    with open(a.out + ".modelinfo", "w") as f:
        f.write(f"""[modelinfo]
version=1.0
group-id={a.group or a.id}

[images]
id=images
type=uint8
dims=1,{h},{w},3
dir=input
ranges=0.0,255.0

[output0]
id={a.id}
type=float32
dims={dims}
dir=output
dims-order={a.dims_order}
""")


if __name__ == "__main__":
    main()
