// htm bound to Preact's h: tagged templates instead of JSX, so the console needs no JSX transform.
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
