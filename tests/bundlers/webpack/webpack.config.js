// All a webpack 5 app needs for tlsproof: nothing beyond its usual setup (the page and its
// entry). The host serves the output with the cross-origin isolation headers.
const HtmlWebpackPlugin = require("html-webpack-plugin");

module.exports = {
  entry: "./main.js",
  output: { clean: true },
  plugins: [new HtmlWebpackPlugin({ template: "./index.html" })],
};
