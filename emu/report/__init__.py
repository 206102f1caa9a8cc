"""`emu report`: one self-contained HTML file comparing runs.

- `runs`  reads an output directory (summary.json and its timeline) or an
          SLS realtimetrack.json into a `RunData`.
- `html`  renders runs into one HTML file with Chart.js and the data inlined.
"""
