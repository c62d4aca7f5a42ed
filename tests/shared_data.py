"""Where the tests find the real recorded data: tests/data/shared, a copy of the files of
../shared/data they read (with their licences), so that a plain clone tests the same."""

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "shared"
TENHOU_CAPTURES = DATA / "tenhou" / "dnovikoff_protocol_captures"
MJAI_GAME = DATA / "mjai" / "local_match_seed10000_2000.mjai.jsonl"
BOTZONE_HUMAN_GAMES = DATA / "botzone" / "ccr_cheng_processed_data_sample.json"
BOTZONE_JUDGE_LOG = Path(__file__).resolve().parent / "data" / "botzone_judge_log.json"
LAB_REFEREE = DATA / "ntpu" / "lab_referee"
# the whole folder of the NYCU lab referee's records, beside the project (absent in a clone)
SHARED_LAB_REFEREE = Path(__file__).resolve().parents[2] / "shared" / "data" / "ntpu" / \
    "lab_referee"
# the Tenhou client captures in ../shared, beside the project (absent in a clone): any added
# there since the copy above are read too
SHARED_TENHOU_CAPTURES = Path(__file__).resolve().parents[2] / "shared" / "data" / "tenhou" / \
    "dnovikoff_protocol_captures"
