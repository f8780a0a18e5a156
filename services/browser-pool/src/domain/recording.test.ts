import { recordingSize } from "./recording";

test("a recording fits in 1280x720 with the screen's aspect, in even sizes", () => {
  expect(recordingSize(1920, 1080)).toEqual({ width: 1280, height: 720 });
  expect(recordingSize(1024, 768)).toEqual({ width: 960, height: 720 });
  expect(recordingSize(800, 600)).toEqual({ width: 800, height: 600 });
  expect(recordingSize(321, 241)).toEqual({ width: 322, height: 242 });
  expect(recordingSize(7680, 240)).toEqual({ width: 1280, height: 40 });
});
