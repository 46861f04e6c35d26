"""GraphBuilder: a small layer over onnx.helper for writing test graphs by hand.

A builder owns the nodes and initializers of one graph while it is written, and
a numpy Generator that draws every random weight, so a model is a pure function
of its seed. Node outputs are named "<node name>_output" unless a name is given;
initializer names are unique (adding a name twice is an error, except through
`const`, which shares a constant that is already there with the same value).
"""
import collections

import numpy as np
from onnx import TensorProto, helper, numpy_helper

IR_VERSION = 8
OPSET = 17
PRODUCER = "tunefarm make_test_models.py"

ELEM_NAMES = {
    TensorProto.FLOAT: "f32",
    TensorProto.DOUBLE: "f64",
    TensorProto.INT64: "i64",
    TensorProto.STRING: "string",
}


class GraphBuilder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = collections.OrderedDict()

    def weight(self, name, shape, std):
        """A random f32 initializer drawn from N(0, std^2)."""
        data = self.rng.standard_normal(shape, dtype=np.float32)
        data *= np.float32(std)
        return self.tensor(name, data)

    def he_normal(self, name, shape, gain=1.0):
        """Conv or Gemm weights with He-normal scale: fan_in is every dimension but the first."""
        fan_in = int(np.prod(shape[1:]))
        return self.weight(name, shape, gain * np.sqrt(2.0 / fan_in))

    def tensor(self, name, array):
        if name in self.initializers:
            raise ValueError("initializer %s added twice" % name)
        self.initializers[name] = numpy_helper.from_array(np.array(array, order="C"), name)  # keeps 0-d scalars 0-d
        return name

    def const(self, name, value, dtype=np.float32):
        """A constant initializer (a 0-d scalar for a Python number), shared by name."""
        array = np.array(value, dtype=dtype)
        existing = self.initializers.get(name)
        if existing is not None:
            if not np.array_equal(numpy_helper.to_array(existing), array):
                raise ValueError("constant %s redefined with another value" % name)
            return name
        return self.tensor(name, array)

    def node(self, op_type, name, inputs, output=None, **attrs):
        """Appends a node with one output and returns the output's name."""
        output = output or name + "_output"
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], name=name, **attrs))
        return output

    def model(self, graph_name, inputs, outputs):
        """inputs / outputs: lists of (name, elem_type, shape)."""
        graph = helper.make_graph(
            self.nodes, graph_name,
            [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
            [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
            initializer=list(self.initializers.values()))
        return make_model(graph)


def make_model(graph, opset=OPSET, ir_version=IR_VERSION, extra_opsets=()):
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=opsets, producer_name=PRODUCER)
    model.ir_version = ir_version
    return model


def describe_value(value_info):
    """'name:f32[1,3,224,224]' for a graph input or output (symbolic dims by name)."""
    tensor_type = value_info.type.tensor_type
    dims = [d.dim_param if d.HasField("dim_param") else str(d.dim_value) for d in tensor_type.shape.dim]
    elem = ELEM_NAMES.get(tensor_type.elem_type, "type%d" % tensor_type.elem_type)
    return "%s:%s[%s]" % (value_info.name, elem, ",".join(dims))


def parameter_count(model):
    return sum(int(np.prod(t.dims)) for t in model.graph.initializer)
