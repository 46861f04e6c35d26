"""The convolutional test models: ResNet-50, MobileNet-V2 and the small CNN.

Each function returns an onnx.ModelProto shaped as PyTorch exports the
torchvision model in eval mode with BatchNorm folded into the convolutions (so
every Conv has a bias), batch 1, input `input` and output `logits`. Node names
follow torchvision's module names ("layer1.0.conv1", "features.3.conv.1.0").
Weights are random: He-normal, with the last convolution of each residual
branch scaled down so that activations stay in a modest range through the
residual adds (the numpy evaluator checks that they stay finite).
"""
import numpy as np
from onnx import TensorProto

from testmodels.builder import GraphBuilder

# The last convolution of a residual branch is drawn this much smaller than
# He-normal, as zero-initialised residual gammas would make it after training.
RESIDUAL_GAIN = 0.2
BIAS_STD = 0.05


def conv(b, name, x, cin, cout, kernel, stride=1, pad=0, group=1, gain=1.0, bias=True):
    """A Conv node with the attributes torch.onnx writes for nn.Conv2d."""
    weight = b.he_normal(name + ".weight", [cout, cin // group, kernel, kernel], gain)
    inputs = [x, weight]
    if bias:
        inputs.append(b.weight(name + ".bias", [cout], BIAS_STD))
    return b.node("Conv", name, inputs, dilations=[1, 1], group=group, kernel_shape=[kernel, kernel],
                  pads=[pad] * 4, strides=[stride, stride])


def relu6(b, name, x):
    """torch's ReLU6 as opset 11+ exports it: Clip with scalar min / max inputs."""
    return b.node("Clip", name, [x, b.const("clip_min", 0.0), b.const("clip_max", 6.0)])


def classifier(b, name, x, features, classes=1000, output="logits"):
    pooled = b.node("GlobalAveragePool", "avgpool", [x])
    flat = b.node("Flatten", "flatten", [pooled], axis=1)
    weight = b.he_normal(name + ".weight", [classes, features], gain=np.sqrt(0.5))
    bias = b.weight(name + ".bias", [classes], BIAS_STD)
    return b.node("Gemm", name, [flat, weight, bias], output=output, alpha=1.0, beta=1.0, transB=1)


def image_io(height=224, width=224, classes=1000):
    return ([("input", TensorProto.FLOAT, [1, 3, height, width])], [("logits", TensorProto.FLOAT, [1, classes])])


def resnet50(seed=50):
    b = GraphBuilder(seed)
    x = conv(b, "conv1", "input", 3, 64, 7, stride=2, pad=3)
    x = b.node("Relu", "relu", [x])
    x = b.node("MaxPool", "maxpool", [x], ceil_mode=0, dilations=[1, 1], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
               strides=[2, 2])
    channels = 64
    for stage, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        for block in range(blocks):
            p = "layer%d.%d" % (stage, block)
            s = stride if block == 0 else 1
            identity = x
            # torchvision calls one `relu` module three times; each call is its own node here.
            y = b.node("Relu", p + ".relu1", [conv(b, p + ".conv1", x, channels, width, 1)])
            y = b.node("Relu", p + ".relu2", [conv(b, p + ".conv2", y, width, width, 3, stride=s, pad=1)])
            y = conv(b, p + ".conv3", y, width, 4 * width, 1, gain=RESIDUAL_GAIN)
            if block == 0:  # torchvision downsamples every stage's first block (layer1's only widens)
                identity = conv(b, p + ".downsample.0", x, channels, 4 * width, 1, stride=s)
            x = b.node("Relu", p + ".relu3", [b.node("Add", p + ".add", [y, identity])])
            channels = 4 * width
    classifier(b, "fc", x, 2048)
    return b.model("resnet50", *image_io())


# torchvision's inverted residual settings: expansion t, output channels c, blocks n, first stride s.
MOBILENET_V2_SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                         (6, 320, 1, 1)]


def mobilenet_v2(seed=2):
    b = GraphBuilder(seed)
    x = relu6(b, "features.0.2", conv(b, "features.0.0", "input", 3, 32, 3, stride=2, pad=1))
    channels, index = 32, 1
    for t, c, n, s in MOBILENET_V2_SETTINGS:
        for block in range(n):
            stride = s if block == 0 else 1
            hidden = channels * t
            p = "features.%d.conv" % index
            y, part = x, 0
            if t != 1:
                y = relu6(b, p + ".0.2", conv(b, p + ".0.0", y, channels, hidden, 1))
                part = 1
            y = conv(b, "%s.%d.0" % (p, part), y, hidden, hidden, 3, stride=stride, pad=1, group=hidden)
            y = relu6(b, "%s.%d.2" % (p, part), y)
            y = conv(b, "%s.%d" % (p, part + 1), y, hidden, c, 1, gain=RESIDUAL_GAIN)
            if stride == 1 and channels == c:
                y = b.node("Add", "features.%d.add" % index, [x, y])
            x, channels, index = y, c, index + 1
    x = relu6(b, "features.18.2", conv(b, "features.18.0", x, 320, 1280, 1))
    classifier(b, "classifier.1", x, 1280)
    return b.model("mobilenet_v2", *image_io())


SMALL_CNN_SHAPE = (17, 19)  # odd on purpose: the stride-2 layers round down


def small_cnn(seed=17):
    b = GraphBuilder(seed)
    a = b.node("Relu", "relu0", [conv(b, "conv0", "input", 3, 8, 3, stride=2, pad=1)])
    y = relu6(b, "clip1", conv(b, "dwconv1", a, 8, 8, 3, stride=1, pad=1, group=8))
    y = conv(b, "conv2", y, 8, 8, 1)
    x = b.node("Relu", "relu2", [b.node("Add", "add2", [y, a])])
    x = b.node("MaxPool", "maxpool3", [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    x = conv(b, "conv4", x, 8, 16, 1, bias=False)
    classifier(b, "fc", x, 16, classes=10)
    return b.model("small_cnn", *image_io(*SMALL_CNN_SHAPE, classes=10))


def small_cnn_inputs(seed=1017):
    rng = np.random.default_rng(seed)
    return {"input": rng.standard_normal([1, 3, *SMALL_CNN_SHAPE], dtype=np.float32)}
