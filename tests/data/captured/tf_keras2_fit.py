"""tf.keras 2.15's `model.fit` on generated rows: 2 epochs of 16 batches with validation, then
`evaluate`; batch 21 (the 5th of epoch 2) made slow (1 s).  argv[1]: fit's `verbose` (1 or 2)."""
import sys
import time

import numpy as np
import tensorflow as tf

SLOW_BATCH = 21


class SlowBatch(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = 0

    def on_train_batch_begin(self, batch, logs=None):
        self.seen += 1
        if self.seen == SLOW_BATCH:
            time.sleep(1.0)


rng = np.random.default_rng(0)
x = rng.normal(size=(512, 16)).astype("float32")
y = (x.sum(axis=1) > 0).astype("int32")
model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(2)])
model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
model.fit(x, y, batch_size=32, epochs=2, validation_split=0.0, validation_data=(x[:128], y[:128]),
          callbacks=[SlowBatch()], verbose=int(sys.argv[1]))
model.evaluate(x[:128], y[:128], verbose=1 if sys.argv[1] == "1" else 2)
