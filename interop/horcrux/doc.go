// Package horcrux checks signerkit's state import against state files
// written by horcrux's own code (github.com/strangelove-ventures/horcrux/v3,
// its signer package's SignState), in a module of its own so that neither
// the main module nor interop's takes horcrux's dependencies.
package horcrux
