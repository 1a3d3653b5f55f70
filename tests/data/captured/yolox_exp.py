# YOLOX Exp: nano-like depth/width, 160 input, 2 classes, 2 epochs, tiny synthetic COCO set.
import os
from yolox.exp import Exp as MyExp


class Exp(MyExp):
    def __init__(self):
        super(Exp, self).__init__()
        self.depth = 0.33
        self.width = 0.25
        self.num_classes = 2
        self.input_size = (160, 160)
        self.test_size = (160, 160)
        self.multiscale_range = 0
        self.mosaic_scale = (0.5, 1.5)
        self.enable_mixup = False
        self.max_epoch = 2
        self.warmup_epochs = 1
        self.no_aug_epochs = 0
        self.print_interval = 1
        self.eval_interval = 1
        self.data_num_workers = 0
        self.data_dir = "/tmp/cap-vis/coco"
        self.train_ann = "instances_train2017.json"
        self.val_ann = "instances_val2017.json"
        self.exp_name = os.path.split(os.path.realpath(__file__))[1].split(".")[0]
