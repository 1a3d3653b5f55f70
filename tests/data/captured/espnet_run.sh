#!/bin/sh
# A tiny ESPnet2 ASR training on the CPU (ESPnet 202511): 16 utterances of noise in batches of
# 2 (8 batches an epoch), MAX_EPOCH epochs (3), the reporter's line every 2 batches.  ESPNET_SLOW_UTT names
# an utterance that espnet_slow_load.py makes 0.5 s slow to load.
# Run: sh espnet_run.sh DATA OUTDIR   (DATA made by espnet_tiny_data.py; MAX_EPOCH, RESUME=true)
data=$1 out=$2
exec python -m espnet2.bin.asr_train --output_dir "$out" --ngpu 0 --num_workers 0 --seed 0 \
  --train_data_path_and_name_and_type "$data/train/wav.scp,speech,sound" \
  --train_data_path_and_name_and_type "$data/train/text,text,text" \
  --valid_data_path_and_name_and_type "$data/valid/wav.scp,speech,sound" \
  --valid_data_path_and_name_and_type "$data/valid/text,text,text" \
  --train_shape_file "$data/train/speech_shape" --train_shape_file "$data/train/text_shape" \
  --valid_shape_file "$data/valid/speech_shape" --valid_shape_file "$data/valid/text_shape" \
  --token_type char --token_list "$data/tokens.txt" \
  --batch_type unsorted --batch_size 2 --max_epoch "${MAX_EPOCH:-3}" --resume "${RESUME:-false}" --log_interval 2 \
  --normalize None --specaug None \
  --frontend default --frontend_conf n_fft=256 --frontend_conf hop_length=128 --frontend_conf n_mels=20 \
  --encoder transformer --encoder_conf output_size=16 --encoder_conf attention_heads=2 \
  --encoder_conf linear_units=32 --encoder_conf num_blocks=1 \
  --decoder transformer --decoder_conf attention_heads=2 --decoder_conf linear_units=32 \
  --decoder_conf num_blocks=1 --model_conf ctc_weight=0.3 --optim adam --optim_conf lr=0.001
