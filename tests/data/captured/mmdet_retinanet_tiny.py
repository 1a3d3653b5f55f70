# Tiny RetinaNet (ResNet-18, random init) on a synthetic 2-class COCO set, CPU.
# Standalone config; runtime part copied from mmdet 3.3.0
# configs/_base_/default_runtime.py (logger interval -> 1, window_size -> 1).
custom_imports = dict(imports=['mmdet_slow_sample'], allow_failed_imports=False)
default_scope = 'mmdet'
randomness = dict(seed=0)

data_root = '/tmp/md/data/'
metainfo = dict(classes=('red', 'blue'),
                palette=[(220, 30, 30), (30, 30, 220)])

model = dict(
    type='RetinaNet',
    data_preprocessor=dict(
        type='DetDataPreprocessor',
        mean=[123.675, 116.28, 103.53],
        std=[58.395, 57.12, 57.375],
        bgr_to_rgb=True,
        pad_size_divisor=32),
    backbone=dict(
        type='ResNet', depth=18, num_stages=4, out_indices=(0, 1, 2, 3),
        frozen_stages=-1, norm_cfg=dict(type='BN', requires_grad=True),
        norm_eval=False, style='pytorch'),
    neck=dict(
        type='FPN', in_channels=[64, 128, 256, 512], out_channels=64,
        start_level=1, add_extra_convs='on_input', num_outs=5),
    bbox_head=dict(
        type='RetinaHead', num_classes=2, in_channels=64, stacked_convs=2,
        feat_channels=64,
        anchor_generator=dict(
            type='AnchorGenerator', octave_base_scale=4, scales_per_octave=3,
            ratios=[0.5, 1.0, 2.0], strides=[8, 16, 32, 64, 128]),
        bbox_coder=dict(
            type='DeltaXYWHBBoxCoder', target_means=[.0, .0, .0, .0],
            target_stds=[1.0, 1.0, 1.0, 1.0]),
        loss_cls=dict(
            type='FocalLoss', use_sigmoid=True, gamma=2.0, alpha=0.25,
            loss_weight=1.0),
        loss_bbox=dict(type='L1Loss', loss_weight=1.0)),
    train_cfg=dict(
        assigner=dict(
            type='MaxIoUAssigner', pos_iou_thr=0.5, neg_iou_thr=0.4,
            min_pos_iou=0, ignore_iof_thr=-1),
        sampler=dict(type='PseudoSampler'),
        allowed_border=-1, pos_weight=-1, debug=False),
    test_cfg=dict(
        nms_pre=1000, min_bbox_size=0, score_thr=0.0,  # untrained net scores ~0.01
        nms=dict(type='nms', iou_threshold=0.5), max_per_img=100))

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', with_bbox=True),
    dict(type='SlowOnce', nth=9, seconds=0.5),  # data-path slowdown, iter 5
    dict(type='Resize', scale=(128, 128), keep_ratio=True),
    dict(type='RandomFlip', prob=0.5),
    dict(type='PackDetInputs')
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(128, 128), keep_ratio=True),
    dict(type='LoadAnnotations', with_bbox=True),
    dict(type='PackDetInputs',
         meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape',
                    'scale_factor'))
]
train_dataloader = dict(
    batch_size=2, num_workers=0, persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=True),
    batch_sampler=dict(type='AspectRatioBatchSampler'),
    dataset=dict(
        type='CocoDataset', data_root=data_root, metainfo=metainfo,
        ann_file='train.json', data_prefix=dict(img='train/'),
        filter_cfg=dict(filter_empty_gt=True, min_size=4),
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=2, num_workers=0, persistent_workers=False, drop_last=False,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type='CocoDataset', data_root=data_root, metainfo=metainfo,
        ann_file='val.json', data_prefix=dict(img='val/'),
        test_mode=True, pipeline=test_pipeline))
test_dataloader = val_dataloader
val_evaluator = dict(
    type='CocoMetric', ann_file=data_root + 'val.json', metric='bbox',
    format_only=False)
test_evaluator = val_evaluator

train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=2, val_interval=1)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
param_scheduler = [
    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0,
         end=4),
    dict(type='MultiStepLR', begin=0, end=3, by_epoch=True, milestones=[2],
         gamma=0.1)
]
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='SGD', lr=0.01, momentum=0.9, weight_decay=0.0001),
    clip_grad=dict(max_norm=35, norm_type=2))

default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=1),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', interval=1),
    sampler_seed=dict(type='DistSamplerSeedHook'),
    visualization=dict(type='DetVisualizationHook'))
env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'))
vis_backends = [dict(type='LocalVisBackend')]
visualizer = dict(
    type='DetLocalVisualizer', vis_backends=vis_backends, name='visualizer')
log_processor = dict(type='LogProcessor', window_size=1, by_epoch=True)
log_level = 'INFO'
load_from = None
resume = False
