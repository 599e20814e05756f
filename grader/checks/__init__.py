"""Stage 3, checks: properties of attention as hypothesis tests, run against a submission through the sandbox's
client, every expectation computed here. `shared` holds the checks of every exercise; each exercise adds its own."""
